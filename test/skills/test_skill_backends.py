"""Every backend against an in-process fake of its server side, over real ROS topics.

Topic backends talk to fake nodes (ros_fakes.py) through DDS in one context; the
action-mode arm and gripper use a test double of rclpy's ActionClient (control_msgs is
not installable here) and the Nav2 backend a test double of BasicNavigator
(nav2_simple_commander is not installable either). Each backend is checked for success,
its failure verdict, a silent topic or missing server named in the message, and
cancel in the middle of a motion.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from action_msgs.msg import GoalStatus
from rclpy.node import Node
from ros_fakes import (
    FakeActionClient,
    FakeArmController,
    FakeHandE,
    FakeNavigator,
    FakeOdomBase,
    RosHarness,
    TaskResult,
    arm_action_server,
    fake_action_type,
    follow_joint_trajectory_goal,
    gripper_action_server,
    gripper_command_goal,
)
from trajectory_msgs.msg import JointTrajectory

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.arm import ActionArm, TopicArm
from cowp_ros.ros.skill_backends.base import Nav2Base, TopicBase, import_basic_navigator
from cowp_ros.ros.skill_backends.camera import DetectionCamera
from cowp_ros.ros.skill_backends.common import JointStateCache, Timeouts
from cowp_ros.ros.skill_backends.factory import resolve_choice
from cowp_ros.ros.skill_backends.gripper import ActionGripper, TopicGripper
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.interfaces import Outcome, Pose2D, Status

pytestmark = pytest.mark.ros

# Generous where a test expects success: the machine is shared and first discovery can
# take seconds. Tests of a timeout pass their own, short, Timeouts.
QUICK = Timeouts(
    server_s=10.0, topic_s=5.0, navigate_s=20.0, arm_margin_s=10.0, gripper_s=10.0, detect_s=5.0
)
COUNTER = Pose2D(2.0, 0.5, 0.0)


@pytest.fixture
def client(harness: RosHarness) -> Iterator:
    """The node the backend under test lives on (the executor's role)."""
    node = harness.node(f"backend_under_test_{time.monotonic_ns()}")
    yield node
    harness.remove(node)


@pytest.fixture
def fakes(harness: RosHarness) -> Iterator[list]:
    """Fake server nodes a test starts; removed after it."""
    started: list = []
    yield started
    for node in started:
        harness.remove(node)


def start(harness: RosHarness, fakes: list, node):
    harness.add(node)
    fakes.append(node)
    return node


def in_thread(call: Callable[[], Outcome]) -> tuple[threading.Thread, list[Outcome]]:
    box: list[Outcome] = []
    thread = threading.Thread(target=lambda: box.append(call()), daemon=True)
    thread.start()
    return thread, box


def eventually(condition: Callable[[], bool], timeout_s: float = 3.0) -> bool:
    """A message published just now reaches its subscriber a moment later."""
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def cancel_when(
    condition: Callable[[], bool], cancel: threading.Event, timeout_s: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition(), "the motion never started"
    cancel.set()


# --- arm, topic mode ---------------------------------------------------------------


def arm_fake(harness, fakes, robot: RobotConfig, **kwargs) -> FakeArmController:
    return start(
        harness,
        fakes,
        FakeArmController(
            harness,
            joint_names=robot.arm.joint_names,
            start=robot.arm.poses["home"],
            trajectory_topic=kwargs.pop("trajectory_topic", robot.arm.trajectory_topic),
            **kwargs,
        ),
    )


def topic_arm(client, robot: RobotConfig, timeouts: Timeouts = QUICK) -> TopicArm:
    joints = JointStateCache(client, robot.arm.joint_states_topic, None)
    return TopicArm(client, robot.arm, timeouts, joints)


def test_topic_arm_reaches_the_pose_on_joint_states(harness, fakes, client, fast_robot) -> None:
    controller = arm_fake(harness, fakes, fast_robot)
    arm = topic_arm(client, fast_robot)
    goal = fast_robot.arm.poses["pre_grasp"]
    outcome = arm.move_to("pre_grasp", goal, threading.Event())
    assert outcome.ok, outcome.message
    assert controller.positions == pytest.approx(list(goal), abs=fast_robot.arm.joint_tolerance_rad)
    sent = controller.received[-1]
    assert sent.joint_names == list(fast_robot.arm.joint_names) and len(sent.points) == 1


def test_topic_arm_paces_moves_by_the_configured_speed(harness, fakes, client, robot) -> None:
    controller = arm_fake(harness, fakes, robot)
    arm = topic_arm(client, robot)
    home, look = robot.arm.poses["home"], robot.arm.poses["look_down"]
    t0 = time.monotonic()
    assert arm.move_to("look_down", look, threading.Event()).ok
    travel = max(abs(a - b) for a, b in zip(home, look, strict=True))
    expected = max(robot.arm.min_move_duration_s, travel / robot.arm.max_joint_velocity_rad_s)
    point = controller.received[-1].points[0].time_from_start
    assert point.sec + point.nanosec * 1e-9 == pytest.approx(expected, abs=1e-6)
    assert time.monotonic() - t0 >= expected * 0.9


def unserved(robot: RobotConfig, section: str, key: str) -> RobotConfig:
    """The config with one topic renamed to one no fake (of this or an earlier test,
    whose endpoints the graph may still list for a moment) serves."""
    part = getattr(robot, section)
    topic = f"/unserved_{time.monotonic_ns()}{getattr(part, key)}"
    return dataclasses.replace(robot, **{section: dataclasses.replace(part, **{key: topic})})


def test_topic_arm_without_a_controller_names_the_topic(client, fast_robot) -> None:
    fast_robot = unserved(fast_robot, "arm", "trajectory_topic")
    arm = topic_arm(client, fast_robot, Timeouts(server_s=0.5, topic_s=0.5))
    outcome = arm.move_to("home", fast_robot.arm.poses["home"], threading.Event())
    assert outcome.status is Status.FAILED
    assert fast_robot.arm.trajectory_topic in outcome.message
    assert "scaled_joint_trajectory_controller" in outcome.message


def test_topic_arm_with_silent_joint_states_names_the_topic(harness, fakes, client, robot) -> None:
    # Something takes trajectories, but nothing publishes the arm's joint states.
    listener = start(harness, fakes, Node("trajectory_listener", context=harness.context))
    listener.create_subscription(JointTrajectory, robot.arm.trajectory_topic, lambda _m: None, 10)
    arm = topic_arm(client, robot, Timeouts(server_s=5.0, topic_s=0.5))
    outcome = arm.move_to("home", robot.arm.poses["home"], threading.Event())
    assert outcome.status is Status.FAILED
    assert "/joint_states" in outcome.message and "shoulder_pan_joint" in outcome.message


def test_topic_arm_that_never_arrives_times_out_with_the_worst_joint(
    harness, fakes, client, fast_robot
) -> None:
    arm_fake(harness, fakes, fast_robot, stall=True)
    arm = topic_arm(client, fast_robot, Timeouts(server_s=5.0, topic_s=1.0, arm_margin_s=0.5))
    outcome = arm.move_to("grasp", fast_robot.arm.poses["grasp"], threading.Event())
    assert outcome.status is Status.FAILED
    assert "did not reach pose 'grasp'" in outcome.message and "rad off" in outcome.message


def test_topic_arm_cancel_mid_motion_holds_position(harness, fakes, client, robot) -> None:
    controller = arm_fake(harness, fakes, robot)  # slow: the configured speed
    arm = topic_arm(client, robot)
    cancel = threading.Event()
    thread, box = in_thread(lambda: arm.move_to("pour", robot.arm.poses["pour"], cancel))
    cancel_when(lambda: controller.moving, cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED, box
    assert eventually(lambda: len(controller.received) == 2)
    hold = controller.received[-1].points[0]
    assert hold.time_from_start.sec == 0
    time.sleep(0.3)
    assert not controller.moving
    assert controller.positions != pytest.approx(list(robot.arm.poses["pour"]), abs=0.02)


# --- gripper, topic mode -----------------------------------------------------------


def hande(harness, fakes, robot: RobotConfig, object_at: float | None, **kwargs) -> FakeHandE:
    return start(
        harness,
        fakes,
        FakeHandE(
            harness,
            finger_joint=robot.gripper.finger_joint,
            command_topic=kwargs.pop("command_topic", robot.gripper.command_topic),
            object_at=object_at,
            **kwargs,
        ),
    )


def topic_gripper(client, robot: RobotConfig, timeouts: Timeouts = QUICK) -> TopicGripper:
    joints = JointStateCache(client, robot.gripper.joint_states_topic, None)
    return TopicGripper(client, robot.gripper, timeouts, joints)


def test_topic_gripper_grasp_succeeds_when_fingers_stop_on_an_object(
    harness, fakes, client, robot
) -> None:
    hand = hande(harness, fakes, robot, object_at=0.012)
    gripper = topic_gripper(client, robot)
    outcome = gripper.close(threading.Event(), expect_object=True)
    assert outcome.ok, outcome.message
    assert "12.0 mm" in outcome.message and hand.commands == [robot.gripper.closed_position_m]
    assert gripper.open(threading.Event()).ok
    assert hand.commands[-1] == robot.gripper.open_position_m


def test_topic_gripper_grasp_fails_when_fingers_close_fully(harness, fakes, client, robot) -> None:
    hande(harness, fakes, robot, object_at=None)
    outcome = topic_gripper(client, robot).close(threading.Event(), expect_object=True)
    assert outcome.status is Status.FAILED and "grasp failed" in outcome.message
    assert "0.0 mm" in outcome.message


def test_topic_gripper_close_without_object_expectation_succeeds_empty(
    harness, fakes, client, robot
) -> None:
    hande(harness, fakes, robot, object_at=None)
    assert topic_gripper(client, robot).close(threading.Event(), expect_object=False).ok


def test_topic_gripper_with_silent_finger_names_the_joint(harness, fakes, client, robot) -> None:
    start(
        harness,
        fakes,
        FakeHandE(
            harness,
            finger_joint="someone_elses_joint",
            command_topic=robot.gripper.command_topic,
            object_at=None,
        ),
    )
    gripper = topic_gripper(client, robot, Timeouts(server_s=5.0, topic_s=0.5))
    outcome = gripper.close(threading.Event(), expect_object=True)
    assert outcome.status is Status.FAILED
    assert robot.gripper.finger_joint in outcome.message and "/joint_states" in outcome.message


def test_topic_gripper_without_controller_names_the_topic(client, robot) -> None:
    robot = unserved(robot, "gripper", "command_topic")
    gripper = topic_gripper(client, robot, Timeouts(server_s=0.5))
    outcome = gripper.open(threading.Event())
    assert not outcome.ok and robot.gripper.command_topic in outcome.message


def test_topic_gripper_cancel_mid_close_holds_the_fingers(harness, fakes, client, robot) -> None:
    hand = hande(harness, fakes, robot, object_at=None, speed_m_s=0.01)
    gripper = topic_gripper(client, robot)
    cancel = threading.Event()
    thread, box = in_thread(lambda: gripper.close(cancel, expect_object=True))
    cancel_when(lambda: hand.position < 0.022, cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED
    assert eventually(lambda: len(hand.commands) == 2)
    assert hand.commands[-1] > 0.01  # told to stay where it was


# --- base, topic mode --------------------------------------------------------------


def topic_base(client, robot: RobotConfig, timeouts: Timeouts = QUICK) -> TopicBase:
    return TopicBase(client, robot.base, timeouts)


def test_topic_base_arrives_within_tolerance(harness, fakes, client, robot) -> None:
    base = start(harness, fakes, FakeOdomBase(harness, goal_topic=robot.base.goal_topic))
    outcome = topic_base(client, robot).go_to("counter", COUNTER, threading.Event())
    assert outcome.ok, outcome.message
    goal = base.goals[-1]
    assert goal.header.frame_id == "map" and goal.pose.position.x == 2.0
    assert (base.x, base.y) == pytest.approx((2.0, 0.5), abs=robot.base.position_tolerance_m)


def test_topic_base_without_a_subscriber_names_the_goal_topic(client, robot) -> None:
    robot = unserved(robot, "base", "goal_topic")
    outcome = topic_base(client, robot, Timeouts(server_s=0.5)).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert outcome.status is Status.FAILED and "/goal_pose" in outcome.message


def test_topic_base_with_silent_odometry_names_the_topic(harness, fakes, client, robot) -> None:
    listener = start(harness, fakes, FakeOdomBase(harness, goal_topic=robot.base.goal_topic,
                                                  odom_topic="/elsewhere"))  # fmt: skip
    assert listener is not None
    outcome = topic_base(client, robot, Timeouts(server_s=5.0, topic_s=0.5)).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert outcome.status is Status.FAILED
    assert "/odom" in outcome.message and "nav_msgs/Odometry" in outcome.message


def test_topic_base_stuck_base_times_out_with_the_distance(harness, fakes, client, robot) -> None:
    start(harness, fakes, FakeOdomBase(harness, goal_topic=robot.base.goal_topic,
                                       ignore_goals=True))  # fmt: skip
    outcome = topic_base(client, robot, Timeouts(server_s=5.0, topic_s=1.0, navigate_s=0.8)).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert outcome.status is Status.FAILED
    assert "did not reach counter" in outcome.message and "m and" in outcome.message


def test_topic_base_cancel_mid_drive_stops_the_base(harness, fakes, client, robot) -> None:
    base = start(harness, fakes, FakeOdomBase(harness, goal_topic=robot.base.goal_topic,
                                              speed_m_s=0.5))  # fmt: skip
    backend = topic_base(client, robot)
    cancel = threading.Event()
    thread, box = in_thread(lambda: backend.go_to("table", Pose2D(4.0, -2.0, -1.5708), cancel))
    # the backend stops where /odom last said it was, one odom period behind the fake's
    # own x: cancel a little past 0.2 so that "where it stood" is past 0.2 too
    cancel_when(lambda: base.x > 0.3, cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED
    assert eventually(lambda: len(base.goals) == 2)
    stop = base.goals[-1].pose.position
    assert 0.2 < stop.x < 1.5  # a goal where it stood
    time.sleep(0.3)
    assert base.x < 2.0


# --- base, Nav2 (test double of BasicNavigator) ------------------------------------


def nav2(navigator: FakeNavigator, robot: RobotConfig, timeouts: Timeouts = QUICK) -> Nav2Base:
    return Nav2Base(robot.base, timeouts, navigator_factory=lambda: navigator)


@pytest.mark.parametrize("legacy", [False, True], ids=["running_task", "bool"])
def test_nav2_base_succeeds(robot, legacy: bool) -> None:
    navigator = FakeNavigator(legacy_bool=legacy)
    outcome = nav2(navigator, robot).go_to("counter", COUNTER, threading.Event())
    assert outcome.ok, outcome.message
    pose = navigator.poses[-1]
    assert pose.header.frame_id == "map" and pose.pose.position.x == 2.0
    expected = None if legacy else "NAVIGATE_TO_POSE"
    assert set(navigator.task_arguments) == {expected}


def test_nav2_base_failure_carries_navs_error(robot) -> None:
    outcome = nav2(FakeNavigator(outcome=TaskResult.FAILED), robot).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert outcome.status is Status.FAILED
    assert "FAILED" in outcome.message and "no valid path" in outcome.message


def test_nav2_base_rejected_goal(robot) -> None:
    outcome = nav2(FakeNavigator(accept=False), robot).go_to("counter", COUNTER, threading.Event())
    assert not outcome.ok and "rejected" in outcome.message


def test_nav2_base_missing_server_is_named_not_waited_on_forever(robot) -> None:
    outcome = nav2(FakeNavigator(server_up=False), robot).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert not outcome.ok and "/navigate_to_pose" in outcome.message


def test_nav2_base_cancel_mid_drive_cancels_the_task(robot) -> None:
    navigator = FakeNavigator(drive_s=10.0)
    backend = nav2(navigator, robot)
    cancel = threading.Event()
    thread, box = in_thread(lambda: backend.go_to("counter", COUNTER, cancel))
    cancel_when(lambda: bool(navigator.poses), cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED and navigator.cancels == 1


def test_nav2_base_timeout_cancels_the_task(robot) -> None:
    navigator = FakeNavigator(drive_s=10.0)
    outcome = nav2(navigator, robot, Timeouts(navigate_s=0.3)).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert not outcome.ok and "within 0.3 s" in outcome.message and navigator.cancels == 1


def test_nav2_missing_package_names_the_apt_package() -> None:
    try:
        import nav2_simple_commander  # noqa: F401
    except ImportError:
        with pytest.raises(CowpError, match="ros-kilted-nav2-simple-commander"):
            import_basic_navigator()
    else:
        assert callable(import_basic_navigator())


# --- arm and gripper, action mode (test double of the action client) ---------------


def action_arm(client, robot, fake_client) -> ActionArm:
    joints = JointStateCache(client, robot.arm.joint_states_topic, None)
    return ActionArm(
        client,
        robot.arm,
        QUICK,
        joints,
        action_type=fake_action_type(follow_joint_trajectory_goal),
        client=fake_client,
    )


def test_action_arm_succeeds_and_confirms_on_joint_states(
    harness, fakes, client, fast_robot
) -> None:
    controller = arm_fake(harness, fakes, fast_robot, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller))
    goal = fast_robot.arm.poses["place"]
    outcome = action_arm(client, fast_robot, server).move_to("place", goal, threading.Event())
    assert outcome.ok, outcome.message
    sent = server.goals[-1].trajectory
    assert sent.joint_names == list(fast_robot.arm.joint_names)
    assert list(sent.points[0].positions) == pytest.approx(list(goal))


def test_action_arm_controller_error_is_reported(harness, fakes, client, fast_robot) -> None:
    controller = arm_fake(harness, fakes, fast_robot, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller, error_code=-4))
    outcome = action_arm(client, fast_robot, server).move_to(
        "place", fast_robot.arm.poses["place"], threading.Event()
    )
    assert outcome.status is Status.FAILED and "aborted" in outcome.message


def test_action_arm_missing_server_is_named(harness, fakes, client, fast_robot) -> None:
    arm_fake(harness, fakes, fast_robot, trajectory_topic=None)
    outcome = action_arm(client, fast_robot, FakeActionClient(None, server_up=False)).move_to(
        "home", fast_robot.arm.poses["home"], threading.Event()
    )
    assert outcome.status is Status.FAILED
    assert fast_robot.arm.follow_joint_trajectory_action in outcome.message


def test_action_arm_cancel_mid_motion_cancels_the_goal(harness, fakes, client, robot) -> None:
    controller = arm_fake(harness, fakes, robot, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller))
    arm = action_arm(client, robot, server)
    cancel = threading.Event()
    thread, box = in_thread(lambda: arm.move_to("pour", robot.arm.poses["pour"], cancel))
    cancel_when(lambda: controller.moving, cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED


def action_gripper(client, robot, fake_client) -> ActionGripper:
    joints = JointStateCache(client, robot.gripper.joint_states_topic, None)
    return ActionGripper(
        client,
        robot.gripper,
        QUICK,
        joints,
        action_type=fake_action_type(gripper_command_goal),
        client=fake_client,
    )


def test_action_gripper_stall_on_object_is_a_grasp(harness, fakes, client, robot) -> None:
    hand = hande(harness, fakes, robot, object_at=0.01, command_topic=None)
    server = FakeActionClient(gripper_action_server(hand))  # aborts on stall, like Robotiq's
    gripper = action_gripper(client, robot, server)
    outcome = gripper.close(threading.Event(), expect_object=True)
    assert outcome.ok, outcome.message
    command = server.goals[-1].command
    assert (command.position, command.max_effort) == (0.0, robot.gripper.max_effort_n)


def test_action_gripper_closing_on_nothing_fails_the_grasp(harness, fakes, client, robot) -> None:
    hand = hande(harness, fakes, robot, object_at=None, command_topic=None)
    outcome = action_gripper(client, robot, FakeActionClient(gripper_action_server(hand))).close(
        threading.Event(), expect_object=True
    )
    assert outcome.status is Status.FAILED and "grasp failed" in outcome.message


def test_action_gripper_missing_server_is_named(client, robot) -> None:
    outcome = action_gripper(client, robot, FakeActionClient(None, server_up=False)).open(
        threading.Event()
    )
    assert not outcome.ok and robot.gripper.gripper_command_action in outcome.message


def test_action_gripper_goal_rejected(client, robot) -> None:
    outcome = action_gripper(client, robot, FakeActionClient(None, accept=False)).open(
        threading.Event()
    )
    assert not outcome.ok and "rejected" in outcome.message


def test_action_backends_without_control_msgs_name_the_apt_package(client, robot) -> None:
    try:
        import control_msgs  # noqa: F401
    except ImportError:
        joints = JointStateCache(client, robot.arm.joint_states_topic, None)
        with pytest.raises(CowpError, match="ros-kilted-control-msgs"):
            ActionArm(client, robot.arm, QUICK, joints)
        with pytest.raises(CowpError, match="ros-kilted-control-msgs"):
            ActionGripper(client, robot.gripper, QUICK, joints)
    else:
        pytest.skip("control_msgs is installed here")


# --- camera and backend choice ------------------------------------------------------


def test_camera_finds_a_reported_class_and_names_a_silent_topic(harness, client, robot) -> None:
    from cowp_interfaces.msg import Detection, DetectionArray

    silent_topic = f"/unserved_{time.monotonic_ns()}/detections"
    silent = DetectionCamera(client, silent_topic, Timeouts(topic_s=0.5, detect_s=5.0))
    outcome = silent.find("cup", threading.Event())
    assert not outcome.ok and silent_topic in outcome.message and "for 0.5 s" in outcome.message

    camera = DetectionCamera(client, robot.camera.detections_topic, QUICK)

    publisher = client.create_publisher(DetectionArray, robot.camera.detections_topic, 10)
    stop = threading.Event()

    def publish() -> None:
        while not stop.is_set():
            publisher.publish(
                DetectionArray(detections=[Detection(class_name="cup", confidence=0.6)])
            )
            time.sleep(0.05)

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    try:
        assert camera.find("cup", threading.Event()).ok
        camera.timeouts = Timeouts(topic_s=5.0, detect_s=0.5)
        missing = camera.find("bottle", threading.Event())
        assert not missing.ok and "did not report a bottle" in missing.message
    finally:
        stop.set()
        thread.join()


def test_auto_backends_follow_the_profile() -> None:
    sim = resolve_choice("sim", "auto", "auto", "auto", has_control_msgs=True)
    assert (sim.base, sim.arm, sim.gripper) == ("topic", "topic", "topic")
    real = resolve_choice("robot", "auto", "auto", "auto", has_control_msgs=True)
    assert (real.base, real.arm, real.gripper) == ("nav2", "action", "action")
    bare = resolve_choice("robot", "auto", "auto", "auto", has_control_msgs=False)
    assert (bare.arm, bare.gripper) == ("topic", "topic")
    with pytest.raises(CowpError, match="base_backend is 'teleport'"):
        resolve_choice("sim", "teleport", "auto", "auto", has_control_msgs=False)


def test_action_status_constants_match_the_fakes() -> None:
    assert GoalStatus.STATUS_SUCCEEDED == 4 and GoalStatus.STATUS_ABORTED == 6
