"""Every backend against an in-process fake of its server side, over real ROS topics.

Topic backends talk to fake nodes (ros_fakes.py) through DDS in one context; the
action-mode arm, gripper and Nav2 base use a test double of rclpy's ActionClient whose
servers follow the upstream controllers' rules, with message types built from the
upstream definitions in docs/kilted_interfaces.md (control_msgs and nav2_msgs are not
installable here). Each backend is checked for success, its failure verdict, a silent
topic or missing server named in the message, and cancel in the middle of a motion;
arm deadlines against a controller running at a tenth of the speed.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator

import kilted_facts
import pytest
from action_msgs.msg import GoalStatus
from rclpy.node import Node
from ros_fakes import (
    FakeActionClient,
    FakeArmController,
    FakeHandE,
    FakeOdomBase,
    FakeSpeedScaling,
    RosHarness,
    accepts_one_position,
    arm_action_server,
    gripper_command_server,
    navigate_to_pose_server,
    parallel_gripper_server,
)
from trajectory_msgs.msg import JointTrajectory

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.arm import ActionArm, ScaledDeadline, SpeedScaling, TopicArm
from cowp_ros.ros.skill_backends.base import Nav2Base, TopicBase, import_navigate_to_pose
from cowp_ros.ros.skill_backends.camera import DetectionCamera
from cowp_ros.ros.skill_backends.common import JointStateCache, Timeouts
from cowp_ros.ros.skill_backends.gripper import CommandGripper, ParallelGripper, TopicGripper
from cowp_ros.skills.backends import resolve_choice
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.interfaces import MotionResult, Pose2D, Status

pytestmark = pytest.mark.ros

# Generous where a test expects success: the machine is shared and first discovery can
# take seconds. Tests of a timeout pass their own, short, Timeouts.
QUICK = Timeouts(
    server_s=10.0, topic_s=5.0, navigate_s=20.0, arm_margin_s=10.0, gripper_s=10.0, detect_s=5.0
)
NO_SERVER = dataclasses.replace(QUICK, server_s=0.3)
"""For a server that never appears: the wait for it ends at its deadline."""
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


def in_thread(call: Callable[[], MotionResult]) -> tuple[threading.Thread, list[MotionResult]]:
    box: list[MotionResult] = []
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
    # The fingers count as closed once heard within the position tolerance of the closed
    # position: the sample that says so may be the last one before they get there (0.1
    # mm on a busy machine, where the fake's ticks come late), not the exact end.
    reported = re.search(r"fingers closed to (\d+\.\d) mm", outcome.message)
    assert reported, outcome.message
    closed_mm = robot.gripper.closed_position_m * 1000
    tolerance_mm = robot.gripper.position_tolerance_m * 1000
    assert abs(float(reported.group(1)) - closed_mm) <= tolerance_mm + 0.05, outcome.message


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


# --- base, Nav2 (NavigateToPose through a test double of the action client) --------

NAVIGATE_TO_POSE = kilted_facts.action_type("NavigateToPose")


def nav2(robot: RobotConfig, client, fake_client, timeouts: Timeouts = QUICK) -> Nav2Base:
    return Nav2Base(client, robot.base, timeouts, action_type=NAVIGATE_TO_POSE, client=fake_client)


def test_nav2_base_sends_navigate_to_pose_and_succeeds(client, robot) -> None:
    server = FakeActionClient(navigate_to_pose_server(NAVIGATE_TO_POSE))
    outcome = nav2(robot, client, server).go_to("counter", COUNTER, threading.Event())
    assert outcome.ok, outcome.message
    goal = server.goals[-1]
    assert goal.pose.header.frame_id == "map" and goal.pose.pose.position.x == 2.0
    assert goal.behavior_tree == ""


def test_nav2_base_failure_carries_navs_error(client, robot) -> None:
    server = FakeActionClient(
        navigate_to_pose_server(NAVIGATE_TO_POSE, error_code=9003, error_msg="no valid path")
    )
    outcome = nav2(robot, client, server).go_to("counter", COUNTER, threading.Event())
    assert outcome.status is Status.FAILED
    assert "9003" in outcome.message and "no valid path" in outcome.message


def test_nav2_base_rejected_goal(client, robot) -> None:
    outcome = nav2(robot, client, FakeActionClient(None, accept=False)).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert not outcome.ok and "rejected" in outcome.message


def test_nav2_base_missing_server_names_the_action_and_the_namespace(client, robot) -> None:
    outcome = nav2(robot, client, FakeActionClient(None, server_up=False), NO_SERVER).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert not outcome.ok and "/navigate_to_pose" in outcome.message
    assert "base.nav2_action" in outcome.message


def test_nav2_base_cancel_ends_the_wait_for_a_server_that_is_not_there(client, robot) -> None:
    canceled = threading.Event()
    canceled.set()
    outcome = nav2(robot, client, FakeActionClient(None, server_up=False)).go_to(
        "counter", COUNTER, canceled
    )  # QUICK waits 10 s for the server; the cancel ends the wait at once
    assert outcome.status is Status.CANCELED, outcome.message  # not "server not available"


def test_nav2_base_cancel_mid_drive_cancels_the_goal_on_nav2(client, robot) -> None:
    server = FakeActionClient(navigate_to_pose_server(NAVIGATE_TO_POSE, drive_s=10.0))
    backend = nav2(robot, client, server)
    cancel = threading.Event()
    thread, box = in_thread(lambda: backend.go_to("counter", COUNTER, cancel))
    cancel_when(lambda: bool(server.goals), cancel)
    thread.join(timeout=3)
    assert box and box[0].status is Status.CANCELED and server.cancels == 1


def test_nav2_base_timeout_cancels_the_goal(client, robot) -> None:
    server = FakeActionClient(navigate_to_pose_server(NAVIGATE_TO_POSE, drive_s=10.0))
    outcome = nav2(robot, client, server, Timeouts(navigate_s=0.3)).go_to(
        "counter", COUNTER, threading.Event()
    )
    assert not outcome.ok and "within 0.3 s" in outcome.message and server.cancels == 1


def test_nav2_base_reaches_a_namespaced_nav2_by_its_action_name(harness, client, robot) -> None:
    """A real action client on base.nav2_action finds a server only under that name.

    nav2_msgs is not installable here, so server and client share an installable
    action type; what is checked is the name the backend's client uses on the graph.
    """
    from rclpy.action import ActionServer

    from cowp_interfaces.action import ExecuteSkill

    namespace = f"/robot_{time.monotonic_ns()}"
    server_node = harness.node(f"nav2_{time.monotonic_ns()}")
    ActionServer(server_node, ExecuteSkill, f"{namespace}/navigate_to_pose", lambda h: None)
    try:
        named = dataclasses.replace(robot.base, nav2_action=f"{namespace}/navigate_to_pose")
        backend = Nav2Base(client, named, QUICK, action_type=ExecuteSkill)
        assert backend.client.wait_for_server(timeout_sec=10.0)
        bare = Nav2Base(client, robot.base, QUICK, action_type=ExecuteSkill)
        assert not bare.client.wait_for_server(timeout_sec=0.5)
    finally:
        harness.remove(server_node)


def test_nav2_missing_package_names_the_apt_package(monkeypatch: pytest.MonkeyPatch) -> None:
    assert import_navigate_to_pose().__name__ == "NavigateToPose"  # built by make setup
    monkeypatch.setitem(sys.modules, "nav2_msgs", None)
    monkeypatch.setitem(sys.modules, "nav2_msgs.action", None)
    with pytest.raises(CowpError, match="ros-kilted-nav2-msgs"):
        import_navigate_to_pose()


# --- arm, action mode (test double of the action client) ---------------------------

FOLLOW_JOINT_TRAJECTORY = kilted_facts.action_type("FollowJointTrajectory")


def action_arm(client, robot, fake_client, timeouts: Timeouts = QUICK) -> ActionArm:
    joints = JointStateCache(client, robot.arm.joint_states_topic, None)
    scaling = (
        SpeedScaling(client, robot.arm.speed_scaling_topic, None)
        if robot.arm.speed_scaling_topic
        else None
    )
    return ActionArm(
        client,
        robot.arm,
        timeouts,
        joints,
        scaling=scaling,
        action_type=FOLLOW_JOINT_TRAJECTORY,
        client=fake_client,
    )


def test_action_arm_succeeds_and_confirms_on_joint_states(
    harness, fakes, client, fast_robot
) -> None:
    controller = arm_fake(harness, fakes, fast_robot, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller, FOLLOW_JOINT_TRAJECTORY))
    goal = fast_robot.arm.poses["place"]
    outcome = action_arm(client, fast_robot, server).move_to("place", goal, threading.Event())
    assert outcome.ok, outcome.message
    sent = server.goals[-1].trajectory
    assert sent.joint_names == list(fast_robot.arm.joint_names)
    assert list(sent.points[0].positions) == pytest.approx(list(goal))


def test_action_arm_controller_error_is_reported(harness, fakes, client, fast_robot) -> None:
    controller = arm_fake(harness, fakes, fast_robot, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller, FOLLOW_JOINT_TRAJECTORY, error_code=-4))
    outcome = action_arm(client, fast_robot, server).move_to(
        "place", fast_robot.arm.poses["place"], threading.Event()
    )
    assert outcome.status is Status.FAILED and "aborted" in outcome.message


def test_action_arm_missing_server_is_named(harness, fakes, client, fast_robot) -> None:
    arm_fake(harness, fakes, fast_robot, trajectory_topic=None)
    outcome = action_arm(
        client, fast_robot, FakeActionClient(None, server_up=False), NO_SERVER
    ).move_to("home", fast_robot.arm.poses["home"], threading.Event())
    assert outcome.status is Status.FAILED
    assert fast_robot.arm.follow_joint_trajectory_action in outcome.message
    assert "scaled_joint_trajectory_controller active" in outcome.message


def test_action_arm_cancel_mid_motion_cancels_the_goal(harness, fakes, client, robot) -> None:
    controller = arm_fake(harness, fakes, robot, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller, FOLLOW_JOINT_TRAJECTORY))
    arm = action_arm(client, robot, server)
    cancel = threading.Event()
    thread, box = in_thread(lambda: arm.move_to("pour", robot.arm.poses["pour"], cancel))
    cancel_when(lambda: controller.moving, cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED and server.cancels == 1


# --- arm deadlines follow the driver's speed scaling --------------------------------

# A margin much shorter than the slowed move: a wall-clock budget (planned + margin)
# would cancel every move below; the scaled deadline must not. 1.5 s stays under the
# 1.8 s a 0.2 s move gains at 10 %, and leaves a busy machine time to deliver the end.
TIGHT = dataclasses.replace(QUICK, arm_margin_s=1.5)


def scaled(robot: RobotConfig, **arm_changes) -> RobotConfig:
    """The config with its own speed scaling topic (no other test's publisher on it)."""
    topic = f"/t{time.monotonic_ns()}/speed_scaling_state_broadcaster/speed_scaling"
    arm = dataclasses.replace(robot.arm, speed_scaling_topic=topic, **arm_changes)
    return dataclasses.replace(robot, arm=arm)


@pytest.mark.parametrize("mode", ["action", "topic"])
def test_arm_at_a_tenth_of_the_speed_finishes_when_the_driver_reports_10_percent(
    harness, fakes, client, fast_robot, mode: str
) -> None:
    robot = scaled(fast_robot)
    start(harness, fakes, FakeSpeedScaling(harness, topic=robot.arm.speed_scaling_topic,
                                           percent=10.0))  # fmt: skip
    controller = arm_fake(
        harness,
        fakes,
        robot,
        speed_fraction=0.1,
        trajectory_topic=None if mode == "action" else robot.arm.trajectory_topic,
    )
    if mode == "action":
        server = FakeActionClient(arm_action_server(controller, FOLLOW_JOINT_TRAJECTORY))
        arm = action_arm(client, robot, server, TIGHT)
    else:
        joints = JointStateCache(client, robot.arm.joint_states_topic, None)
        arm = TopicArm(client, robot.arm, TIGHT, joints, SpeedScaling(
            client, robot.arm.speed_scaling_topic, None))  # fmt: skip
    assert eventually(lambda: arm.scaling.factor() == pytest.approx(0.1))
    goal = robot.arm.poses["look_down"]
    planned = robot.arm.move_duration(robot.arm.poses["home"], goal)
    t0 = time.monotonic()
    outcome = arm.move_to("look_down", goal, threading.Event())
    took = time.monotonic() - t0
    assert outcome.ok, outcome.message
    # It really took about ten times the planned duration, far past planned + margin.
    assert took >= 9 * planned > planned + TIGHT.arm_margin_s


def test_arm_deadline_still_ends_when_the_arm_is_slower_than_reported(
    harness, fakes, client, fast_robot
) -> None:
    robot = scaled(fast_robot)
    start(harness, fakes, FakeSpeedScaling(harness, topic=robot.arm.speed_scaling_topic,
                                           percent=100.0))  # fmt: skip
    controller = arm_fake(harness, fakes, robot, speed_fraction=0.1, trajectory_topic=None)
    server = FakeActionClient(arm_action_server(controller, FOLLOW_JOINT_TRAJECTORY))
    # 0.2 s planned + 0.5 s margin ends well before the 2 s the slowed arm takes.
    arm = action_arm(client, robot, server, dataclasses.replace(QUICK, arm_margin_s=0.5))
    assert eventually(lambda: arm.scaling.factor() == pytest.approx(1.0))
    outcome = arm.move_to("look_down", robot.arm.poses["look_down"], threading.Event())
    assert outcome.status is Status.FAILED
    assert "speed scaling (as low as 100 %)" in outcome.message and server.cancels == 1


class StubScaling:
    topic = "/speed_scaling_state_broadcaster/speed_scaling"

    def __init__(self, factor: float | None) -> None:
        self.value = factor

    def factor(self) -> float | None:
        return self.value


def test_scaled_deadline_stretches_with_the_scaling_and_starts_the_margin_after() -> None:
    scaling = StubScaling(0.5)
    deadline = ScaledDeadline(0.2, 0.1, scaling, floor=0.05)
    t0 = time.monotonic()
    while not deadline.expired():
        time.sleep(0.005)
    # 0.2 s of trajectory at 50 % is 0.4 s of wall time, then 0.1 s of margin.
    assert 0.45 <= time.monotonic() - t0 < 0.8
    assert "as low as 50 %" in deadline.describe()


def test_scaled_deadline_at_zero_scaling_advances_at_the_floor() -> None:
    deadline = ScaledDeadline(0.05, 0.0, StubScaling(0.0), floor=0.25)
    t0 = time.monotonic()
    while not deadline.expired():
        time.sleep(0.005)
    assert 0.18 <= time.monotonic() - t0 < 0.6  # 0.05 s at 25 %: a paused arm still ends


def test_scaled_deadline_without_a_broadcaster_is_full_speed_and_says_so() -> None:
    deadline = ScaledDeadline(0.1, 0.1, StubScaling(None), floor=0.05)
    t0 = time.monotonic()
    while not deadline.expired():
        time.sleep(0.005)
    assert 0.18 <= time.monotonic() - t0 < 0.5
    assert "no speed scaling heard on /speed_scaling_state_broadcaster" in deadline.describe()


# --- gripper, ParallelGripperCommand (Kilted) and GripperCommand --------------------

PARALLEL_GRIPPER_COMMAND = kilted_facts.action_type("ParallelGripperCommand")
GRIPPER_COMMAND = kilted_facts.action_type("GripperCommand")


def parallel_gripper(client, robot, fake_client, timeouts: Timeouts = QUICK) -> ParallelGripper:
    joints = JointStateCache(client, robot.gripper.joint_states_topic, None)
    return ParallelGripper(
        client,
        robot.gripper,
        timeouts,
        joints,
        action_type=PARALLEL_GRIPPER_COMMAND,
        client=fake_client,
    )


def parallel_server(hand, **rules) -> FakeActionClient:
    return FakeActionClient(
        parallel_gripper_server(hand, PARALLEL_GRIPPER_COMMAND, **rules),
        accept=accepts_one_position,
    )


def test_parallel_gripper_goal_names_the_finger_with_one_position_and_the_effort(
    harness, fakes, client, robot
) -> None:
    hand = hande(harness, fakes, robot, object_at=None, command_topic=None)
    server = parallel_server(hand)
    assert parallel_gripper(client, robot, server).open(threading.Event()).ok
    command = server.goals[-1].command
    assert list(command.name) == [robot.gripper.finger_joint]
    assert list(command.position) == [robot.gripper.open_position_m]
    # the Hand-E driver's force command: a fraction of its 20..185 N range
    assert list(command.effort) == [pytest.approx((robot.gripper.max_effort_n - 20) / 165)]


def test_parallel_gripper_stall_on_an_object_is_a_grasp(harness, fakes, client, robot) -> None:
    hand = hande(harness, fakes, robot, object_at=0.012, command_topic=None)
    server = parallel_server(hand)  # aborts on a stall: allow_stalling false
    outcome = parallel_gripper(client, robot, server).close(threading.Event(), expect_object=True)
    assert outcome.ok, outcome.message
    assert "12.0 mm" in outcome.message


def test_parallel_gripper_closing_on_nothing_fails_though_the_goal_was_reached(
    harness, fakes, client, robot
) -> None:
    hand = hande(harness, fakes, robot, object_at=None, command_topic=None)
    outcome = parallel_gripper(client, robot, parallel_server(hand)).close(
        threading.Event(), expect_object=True
    )
    assert outcome.status is Status.FAILED and "grasp failed" in outcome.message


def test_parallel_gripper_waits_out_a_stall_reported_while_the_fingers_still_move(
    harness, fakes, client, robot
) -> None:
    """The Hand-E driver's velocity state is always 0, so the controller reports a stall
    after stall_timeout even while the fingers close: the verdict must wait for them."""
    hand = hande(harness, fakes, robot, object_at=None, command_topic=None, speed_m_s=0.02)
    server = parallel_server(hand, velocity_state=False, stall_timeout_s=0.2)
    outcome = parallel_gripper(client, robot, server).close(threading.Event(), expect_object=True)
    # Judged at the abort the fingers were still ~20 mm open ("holding"); they were not.
    assert outcome.status is Status.FAILED and "grasp failed" in outcome.message
    hand.object_at = 0.012
    assert parallel_gripper(client, robot, server).open(threading.Event()).ok
    outcome = parallel_gripper(client, robot, server).close(threading.Event(), expect_object=True)
    assert outcome.ok and "12.0 mm" in outcome.message, outcome.message


def test_parallel_gripper_abort_without_a_stall_is_a_failure(client, robot) -> None:
    def broken(goal, handle):
        return GoalStatus.STATUS_ABORTED, PARALLEL_GRIPPER_COMMAND.Result()

    outcome = parallel_gripper(client, robot, FakeActionClient(broken)).open(threading.Event())
    assert outcome.status is Status.FAILED and "aborted" in outcome.message


def test_parallel_gripper_missing_server_names_action_and_controller(client, robot) -> None:
    outcome = parallel_gripper(
        client, robot, FakeActionClient(None, server_up=False), NO_SERVER
    ).open(threading.Event())
    assert not outcome.ok and robot.gripper.gripper_action in outcome.message
    assert "gripper_action_controller active" in outcome.message


def test_parallel_gripper_goal_rejected(client, robot) -> None:
    outcome = parallel_gripper(client, robot, FakeActionClient(None, accept=False)).open(
        threading.Event()
    )
    assert not outcome.ok and "rejected" in outcome.message


def test_parallel_gripper_cancel_mid_close(harness, fakes, client, robot) -> None:
    hand = hande(harness, fakes, robot, object_at=None, command_topic=None, speed_m_s=0.01)
    server = parallel_server(hand, stall_timeout_s=5.0)
    gripper = parallel_gripper(client, robot, server)
    cancel = threading.Event()
    thread, box = in_thread(lambda: gripper.close(cancel, expect_object=True))
    cancel_when(lambda: hand.position < 0.022, cancel)
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED and server.cancels == 1


def test_gripper_command_backend_for_drivers_that_still_serve_it(
    harness, fakes, client, robot
) -> None:
    hand = hande(harness, fakes, robot, object_at=0.01, command_topic=None)
    server = FakeActionClient(gripper_command_server(hand, GRIPPER_COMMAND))
    joints = JointStateCache(client, robot.gripper.joint_states_topic, None)
    gripper = CommandGripper(
        client, robot.gripper, QUICK, joints, action_type=GRIPPER_COMMAND, client=server
    )
    outcome = gripper.close(threading.Event(), expect_object=True)
    assert outcome.ok, outcome.message
    command = server.goals[-1].command
    assert command.position == 0.0
    assert command.max_effort == pytest.approx(robot.gripper.effort_command())


def test_action_backends_without_control_msgs_name_the_apt_package(
    client, robot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # make setup builds control_msgs here; hidden, it is as on a ROS install without it
    monkeypatch.setitem(sys.modules, "control_msgs", None)
    monkeypatch.setitem(sys.modules, "control_msgs.action", None)
    joints = JointStateCache(client, robot.arm.joint_states_topic, None)
    with pytest.raises(CowpError, match="ros-kilted-control-msgs"):
        ActionArm(client, robot.arm, QUICK, joints)
    with pytest.raises(CowpError, match="ros-kilted-control-msgs"):
        ParallelGripper(client, robot.gripper, QUICK, joints)


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


def test_camera_with_frames_waits_for_the_object_in_that_many_frames(client, robot) -> None:
    """detect_frames: the step ends only once the detector has reported the object in
    that many frames since it began (the frames a situation needs, and one more)."""
    from cowp_interfaces.msg import Detection, DetectionArray

    camera = DetectionCamera(client, f"/frames_{time.monotonic_ns()}", QUICK, frames=3)
    start = time.monotonic()
    cup = DetectionArray(detections=[Detection(class_name="cup", confidence=0.6)])
    plate = DetectionArray(detections=[Detection(class_name="plate", confidence=0.6)])
    faint = DetectionArray(detections=[Detection(class_name="cup", confidence=0.1)])
    for message in (cup, plate, faint, cup):
        camera._on_message(message)
    assert not camera._seen_since(start, "cup")  # two frames with a cup: one short
    camera._on_message(cup)
    assert camera._seen_since(start, "cup")
    assert not camera._seen_since(time.monotonic(), "cup")  # none since now


def _everything(module: str) -> bool:
    return True


def _nothing(module: str) -> bool:
    return False


def test_auto_backends_follow_the_profile() -> None:
    sim = resolve_choice("sim", "auto", "auto", "auto", is_installed=_everything)
    assert (sim.base, sim.arm, sim.gripper) == ("topic", "topic", "topic")
    real = resolve_choice("robot", "auto", "auto", "auto", is_installed=_everything)
    assert (real.base, real.arm, real.gripper) == ("nav2", "action", "action")
    gazebo = resolve_choice("gazebo", "auto", "auto", "auto", is_installed=_everything)
    assert (gazebo.base, gazebo.arm, gazebo.gripper) == ("topic", "action", "action")
    bare = resolve_choice("robot", "auto", "auto", "auto", is_installed=_nothing)
    assert (bare.arm, bare.gripper) == ("topic", "topic")
    legacy = resolve_choice("robot", "nav2", "action", "gripper_command", is_installed=_everything)
    assert legacy.gripper == "gripper_command"
    with pytest.raises(CowpError, match="base_backend is 'teleport'"):
        resolve_choice("sim", "teleport", "auto", "auto", is_installed=_nothing)


@pytest.mark.parametrize(
    ("status", "expected", "words"),
    [
        (GoalStatus.STATUS_ABORTED, Status.FAILED, "aborted"),
        (GoalStatus.STATUS_CANCELED, Status.CANCELED, "canceled"),
    ],
)
def test_a_goal_the_server_ends_reads_as_the_status_it_sent(
    client, robot, status: int, expected: Status, words: str
) -> None:
    def ends(goal, handle):
        return status, PARALLEL_GRIPPER_COMMAND.Result()

    outcome = parallel_gripper(client, robot, FakeActionClient(ends)).open(threading.Event())
    assert outcome.status is expected and words in outcome.message, outcome.message
