"""The physics world on its own (no ROS): the arm follows trajectories, the Hand-E lifts
a cup by friction alone and applies the configured force, a slippery cup slips, the base
is planned around furniture and stops within Nav2's goal tolerance, and the safety
invariants catch a base that drives with the arm out and an arm pushed into a table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cowp_ros.physics.navigation import PathFollower
from cowp_ros.physics.safety import ObjectLog, SafetyMonitor
from cowp_ros.physics.scene import layout_for, model_xml
from cowp_ros.physics.trajectory import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    PlayingTrajectory,
    Point,
    Tolerances,
    validate,
)
from cowp_ros.physics.world import ARM_JOINTS, PhysicsWorld
from cowp_ros.physics.world_setup import floor_planner
from cowp_ros.skills.config import RobotConfig, load_robot_config
from cowp_ros.skills.interfaces import Pose2D

ROOT = Path(__file__).resolve().parents[2]
TOLERANCES = Tolerances((0.2,) * 6, (0.02,) * 6, 1.0)


@pytest.fixture(scope="module")
def robot() -> RobotConfig:
    return load_robot_config(ROOT / "config" / "robot.yaml")


def kitchen(robot: RobotConfig, cup_friction: float = 1.0) -> tuple[PhysicsWorld, object]:
    objects = [
        ("cup_1", "cup", "counter", {"friction": cup_friction}),
        ("mug_1", "mug", "cupboard", {}),
        ("faucet_1", "sink", "sink", {"graspable": False}),
    ]
    layout = layout_for(dict(robot.base.locations), objects, robot.surfaces)
    world = PhysicsWorld(
        model_xml(layout, robot.base.locations["counter"]),
        arm=robot.arm.poses["carry"],
        fingers=robot.gripper.open_position_m,
    )
    world.settle(0.3)
    return world, layout


def move(world: PhysicsWorld, positions: tuple[float, ...], seconds: float = 2.0) -> int:
    playing = PlayingTrajectory(
        world.arm_positions(), [Point(seconds, positions, (0.0,) * 6)], TOLERANCES, ARM_JOINTS
    )
    world.play(playing)
    while world.trajectory is playing:
        world.step(10)
    assert world.verdict is not None
    return world.verdict.code


def pick(world: PhysicsWorld, robot: RobotConfig) -> None:
    poses = robot.arm.poses
    world.command_gripper(robot.gripper.open_position_m, robot.gripper.max_effort_n)
    assert move(world, poses["pre_grasp"]) == SUCCESSFUL
    assert move(world, poses["grasp"]) == SUCCESSFUL
    world.command_gripper(robot.gripper.closed_position_m, robot.gripper.max_effort_n)
    world.settle(1.0)


def test_the_arm_follows_a_trajectory_to_its_goal(robot: RobotConfig) -> None:
    world, _ = kitchen(robot)
    goal = robot.arm.poses["look_down"]
    assert move(world, goal) == SUCCESSFUL
    assert max(abs(a - b) for a, b in zip(world.arm_positions(), goal, strict=True)) < 0.005


def test_friction_alone_lifts_the_cup_with_the_configured_force(robot: RobotConfig) -> None:
    world, _ = kitchen(robot)
    start = world.body_pose("cup_1")[0]
    pick(world, robot)
    # The fingers stopped on the cup (40 mm wide: 20 mm each), pressing with 60 N.
    assert 0.015 < world.finger_position() < 0.021
    assert world.finger_force() == pytest.approx(robot.gripper.max_effort_n, abs=0.5)
    assert move(world, robot.arm.poses["carry"]) == SUCCESSFUL
    lifted = world.body_pose("cup_1")[0]
    assert lifted[2] - start[2] > 0.2
    # Carried while the base turns and drives.
    world.command_base(0.3, 0.0, 0.5)
    world.settle(2.0)
    world.command_base(0.0, 0.0, 0.0)
    world.settle(0.5)
    assert world.body_pose("cup_1")[0][2] - start[2] > 0.2


def test_a_slippery_cup_slips_out_of_the_fingers(robot: RobotConfig) -> None:
    world, _ = kitchen(robot, cup_friction=0.02)
    start = world.body_pose("cup_1")[0]
    pick(world, robot)
    move(world, robot.arm.poses["pre_grasp"])
    world.settle(0.5)
    assert world.body_pose("cup_1")[0][2] - start[2] < 0.02
    assert world.finger_position() < robot.gripper.grasp_threshold_m


def test_a_blocked_arm_ends_in_the_controllers_error_code(robot: RobotConfig) -> None:
    world, _ = kitchen(robot)
    # Straight down into the counter: the joints cannot reach the goal.
    low = list(robot.arm.poses["grasp"])
    low[1] += 0.35
    assert move(world, tuple(low)) in (PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED)


def test_goals_are_checked_as_the_controller_checks_them() -> None:
    names = list(ARM_JOINTS)
    assert (
        validate(["elbow", *names[1:]], ARM_JOINTS, [Point(1.0, (0.0,) * 6)]).code == INVALID_JOINTS
    )
    assert validate(names, ARM_JOINTS, []).code == INVALID_GOAL
    backwards = [Point(2.0, (0.0,) * 6), Point(1.0, (0.0,) * 6)]
    assert validate(names, ARM_JOINTS, backwards).code == INVALID_GOAL
    assert validate(names, ARM_JOINTS, [Point(1.0, (0.0,) * 6)]) is None


def test_the_base_is_planned_around_furniture_and_stops_within_the_goal_checker(
    robot: RobotConfig,
) -> None:
    objects = [("cup_1", "cup", "counter", {})]
    layout = layout_for(dict(robot.base.locations), objects, robot.surfaces)
    start = robot.base.locations["counter"]
    world = PhysicsWorld(model_xml(layout, start), arm=robot.arm.poses["carry"])
    planner = floor_planner(layout, robot)
    goal = robot.base.locations["table"]
    path = planner.plan(start, goal)
    assert path is not None and len(path) > 2
    follower = PathFollower(path, goal)
    monitor = SafetyMonitor()
    # Drive in the carry pose, as the executor does.
    assert move(world, robot.arm.poses["carry"]) == SUCCESSFUL
    for _ in range(6000):
        pose = world.base_pose()
        if follower.reached(pose):
            break
        world.command_base(*follower.command(pose))
        world.step(5)
        monitor.check(world, 60.0)
    world.command_base(0.0, 0.0, 0.0)
    world.settle(0.5)
    final = world.base_pose()
    assert final.distance_to(goal) <= 0.25 + 0.03
    assert final.yaw_error_to(goal) <= 0.25 + 0.05
    assert monitor.violations == []


def test_the_monitor_catches_a_base_that_drives_with_the_arm_out(robot: RobotConfig) -> None:
    world, _ = kitchen(robot)
    monitor = SafetyMonitor()
    move(world, robot.arm.poses["home"])  # the hand reaches 0.6 m ahead
    world.command_base(-0.3, 0.0, 0.0)
    for _ in range(50):
        world.step(5)
        monitor.check(world, 60.0)
    rules = {v.rule for v in monitor.violations}
    assert "base moved with the arm outside the carry envelope" in rules


def test_the_monitor_catches_the_arm_touching_the_counter(robot: RobotConfig) -> None:
    world, _ = kitchen(robot)
    monitor = SafetyMonitor()
    low = list(robot.arm.poses["grasp"])
    low[1] += 0.35
    playing = PlayingTrajectory(
        world.arm_positions(), [Point(2.0, tuple(low), (0.0,) * 6)], TOLERANCES, ARM_JOINTS
    )
    world.play(playing)
    for _ in range(300):
        world.step(5)
        monitor.check(world, 60.0)
    assert any(v.rule == "the arm touched furniture or the robot" for v in monitor.violations)


def test_the_object_log_tells_lifted_from_left(robot: RobotConfig) -> None:
    world, _ = kitchen(robot)
    log = ObjectLog()
    log.start(world, ["cup_1", "mug_1"])
    pick(world, robot)
    move(world, robot.arm.poses["carry"])
    log.update(world)
    summary = log.summary()
    assert summary["cup_1"]["held"] and summary["cup_1"]["highest_lift_m"] > 0.2
    assert not summary["mug_1"]["held"] and summary["mug_1"]["highest_lift_m"] < 0.01
    assert summary["mug_1"]["resting_on"] == "cupboard"
    assert math.isclose(summary["mug_1"]["start"][2], robot.surfaces.height, abs_tol=0.005)
    assert log.releases == []
    for _ in range(100):  # carried, then let go: it leaves the fingers once
        world.step(5)
        log.update(world)
    assert log.releases == []
    world.command_gripper(robot.gripper.open_position_m)
    for _ in range(200):
        world.step(5)
        log.update(world)
    assert len(log.releases) == 1 and log.releases[0].startswith("cup_1 left the fingers at")


def test_objects_stand_where_the_grasp_pose_reaches(robot: RobotConfig) -> None:
    """The first spot of a location is under the calibrated grasp pose's fingers."""
    world, _ = kitchen(robot)
    assert move(world, robot.arm.poses["pre_grasp"]) == SUCCESSFUL  # as a pick comes down
    assert move(world, robot.arm.poses["grasp"]) == SUCCESSFUL
    tcp = world.site_position("tcp")
    cup = world.body_pose("cup_1")[0]
    assert np.linalg.norm(tcp[:2] - cup[:2]) < 0.005  # the pads clear a cup by 5 mm


def test_the_physics_robot_is_the_gazebo_robots_description() -> None:
    """Frames, sizes and the Hand-E's stroke as config/gazebo/cowp_robot.urdf.xacro has
    them (one robot description, two simulators)."""
    import xml.etree.ElementTree as ET

    from cowp_ros.physics import scene

    text = (ROOT / "config" / "gazebo" / "cowp_robot.urdf.xacro").read_text()
    tree = ET.fromstring(text)
    props = {p.get("name"): p.get("value") for p in tree if p.tag.endswith("}property")}
    assert float(props["wheel_radius"]) == scene.WHEEL_RADIUS
    assert float(props["finger_stroke"]) == scene.FINGER_STROKE
    joints = {j.get("name"): j for j in tree.iter("joint") if j.get("type")}  # not ros2_control
    mount = [float(v) for v in joints["arm_mount_joint"].find("origin").get("xyz").split()]
    assert tuple(mount) == scene.ARM_MOUNT
    coupler = joints["robotiq_hande_coupler_joint"].find("origin").get("xyz").split()
    assert float(coupler[2]) == scene.HAND_OFFSET
    finger = joints["robotiq_hande_left_finger_joint"].find("origin").get("xyz").split()
    assert float(finger[2]) == scene.FINGER_ORIGIN
    base_box = next(link for link in tree.iter("link") if link.get("name") == "base_link").find(
        "collision/geometry/box"
    )
    assert tuple(float(v) for v in base_box.get("size").split()) == scene.BASE_SIZE
    model = PhysicsWorld(scene.model_xml(scene.Layout(), Pose2D(0.0, 0.0, 0.0))).model
    names = {model.joint(i).name for i in range(model.njnt)}
    assert {f"ur_{j}" for j in ("shoulder_pan_joint", "elbow_joint", "wrist_3_joint")} <= names
    assert {"robotiq_hande_left_finger_joint", "robotiq_hande_right_finger_joint"} <= names


def _computed_move(
    world: PhysicsWorld, robot: RobotConfig, kind: str, name: str, base: Pose2D, stage: str
) -> int:
    """A grasp stage computed from the object's pose in the world, as the runner does."""
    from cowp_ros.skills.grasping import grasp_joints
    from cowp_ros.skills.interfaces import ObjectPose
    from cowp_ros.skills.runner import arm_geometry

    position, quat = world.body_pose(name)
    w, x, y, z = quat
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    obj = ObjectPose(float(position[0]), float(position[1]), float(position[2]), yaw)
    joints = grasp_joints(kind, obj, base, arm_geometry(robot), robot.arm.poses["grasp"], stage)
    return move(world, joints)


def test_a_thin_object_is_pressed_with_the_commanded_force(robot: RobotConfig) -> None:
    """A fork leaves the fingers little travel to close; the Hand-E still presses with
    its set force (it does when it stalls), not with what its position error gives."""
    counter = robot.base.locations["counter"]
    layout = layout_for(dict(robot.base.locations), [("fork_1", "fork", "counter", {})])
    world = PhysicsWorld(model_xml(layout, counter), arm=robot.arm.poses["carry"], fingers=0.025)
    world.settle(0.3)
    for stage in ("approach", "reach"):
        assert _computed_move(world, robot, "fork", "fork_1", counter, stage) == SUCCESSFUL
    for effort in (60.0, 185.0):  # 185 N: more than the servo's position error gives
        world.command_gripper(0.0, effort)
        world.settle(1.0)
        assert 0.002 < world.finger_position() < 0.01  # resting on the fork
        assert world.finger_force() == pytest.approx(effort, abs=0.5)


@pytest.mark.parametrize(
    "off", [(0.0, 0.0, 0.0), (0.04, -0.03, 0.08), (-0.03, 0.05, -0.1)], ids=str
)
def test_a_cupboard_opens_by_its_handle_wherever_the_base_stopped(
    robot: RobotConfig, off: tuple[float, float, float]
) -> None:
    """The handle gripped and pulled along the front's own axis, computed from where the
    front is and where the base stopped (within robot.yaml's arrival tolerance)."""
    at = robot.base.locations["cupboard"]
    stopped = Pose2D(at.x + off[0], at.y + off[1], at.yaw + off[2])
    objects = [("cupboard_1", "cupboard", "cupboard", {"graspable": False})]
    layout = layout_for(dict(robot.base.locations), objects, robot.surfaces)
    world = PhysicsWorld(model_xml(layout, stopped), arm=robot.arm.poses["carry"], fingers=0.025)
    world.settle(0.3)
    monitor = SafetyMonitor()
    for stage in ("approach", "reach"):
        assert _computed_move(world, robot, "cupboard", "cupboard_1", stopped, stage) == 0
    world.command_gripper(0.0, robot.gripper.max_effort_n)
    world.settle(1.0)
    assert world.finger_position() > robot.gripper.grasp_threshold_m  # on the handle
    handle = world.body_pose("cupboard_1")[0]
    from cowp_ros.skills.grasping import grasp_joints
    from cowp_ros.skills.interfaces import ObjectPose
    from cowp_ros.skills.runner import arm_geometry

    geometry = arm_geometry(robot)
    front = ObjectPose(float(handle[0]), float(handle[1]), float(handle[2]), at.yaw)
    pulled = grasp_joints("cupboard", front, stopped, geometry, robot.arm.poses["grasp"], "pull")
    playing = PlayingTrajectory(
        world.arm_positions(), [Point(3.0, pulled, (0.0,) * 6)], TOLERANCES, ARM_JOINTS
    )
    world.play(playing)
    while world.trajectory is playing:
        world.step(10)
        monitor.check(world, robot.gripper.max_effort_n)
    assert world.verdict is not None and world.verdict.code == SUCCESSFUL
    assert world.slide_position("cupboard_1") == pytest.approx(geometry.pull_m, abs=0.02)
    assert monitor.violations == []
