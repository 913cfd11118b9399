"""UR5e kinematics and the grasps computed from poses: inverse kinematics checked against
forward kinematics, a computed grasp puts the grasp point on the object's, with the
fingers across it, wherever the base stands within reach; beyond reach it says how far."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.skills import kinematics
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.grasping import grasp_joints, grasp_point
from cowp_ros.skills.interfaces import Backends, MotionResult, ObjectPose, Pose2D
from cowp_ros.skills.runner import SkillRunner, arm_geometry
from cowp_ros.skills.skill_map import SkillMap
from cowp_ros.skills.world import Whereabouts


def test_inverse_kinematics_recovers_every_configuration_it_is_given() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        q = rng.uniform(-math.pi, math.pi, 6)
        q[2] = rng.uniform(-3.0, 3.0)
        solutions = kinematics.inverse(kinematics.forward(q), q)
        assert solutions, q
        best = solutions[0]
        assert best.distance < 1e-6
        for other in solutions:  # every solution reaches the same tool pose
            assert np.allclose(
                kinematics.forward(other.positions), kinematics.forward(q), atol=1e-6
            )


def test_forward_kinematics_matches_urs_published_reach() -> None:
    # All joints at zero: the arm stretched out, tool0 at a2 + a3 ahead (negative DH x,
    # turned half a turn into base_link), d4 + d6 across... as UR's DH table gives.
    tool0 = kinematics.forward([0.0] * 6)
    assert tool0[0, 3] == pytest.approx(0.425 + 0.3922, abs=1e-9)
    assert tool0[1, 3] == pytest.approx(0.1333 + 0.0996, abs=1e-9)
    assert tool0[2, 3] == pytest.approx(0.1625 - 0.0997, abs=1e-9)


def _tcp(robot: RobotConfig, joints: tuple[float, ...], base: Pose2D) -> np.ndarray:
    tool0 = kinematics.forward(joints)
    point = tool0 @ np.array([0.0, 0.0, robot.gripper.tcp_from_tool0_m, 1.0])
    local = point[:3] + np.array(robot.arm.mount)
    c, s = math.cos(base.yaw), math.sin(base.yaw)
    return np.array(
        [base.x + c * local[0] - s * local[1], base.y + s * local[0] + c * local[1], local[2]]
    )


@pytest.mark.parametrize("kind", ["cup", "plate", "fork"])
@pytest.mark.parametrize("base", [Pose2D(0.0, 0.0, 0.0), Pose2D(0.05, -0.04, 0.08)])
def test_a_computed_grasp_puts_the_grasp_point_on_the_object(
    robot: RobotConfig, kind: str, base: Pose2D
) -> None:
    geometry = arm_geometry(robot)
    obj = ObjectPose(0.80, 0.15, robot.surfaces.height, 0.3)
    joints = grasp_joints(kind, obj, base, geometry, robot.arm.poses["grasp"], "reach")
    target, closing = grasp_point(kind, obj)
    assert np.linalg.norm(_tcp(robot, joints, base) - target) < 1e-5
    tool0 = kinematics.forward(joints)
    assert tool0[2, 2] == pytest.approx(-1.0, abs=1e-6)  # pointing straight down
    if not math.isnan(closing):  # the fingers (tool y) close along the closing direction
        y_axis = tool0[:3, 1]
        direction = closing - base.yaw
        assert (
            abs(abs(y_axis[0] * math.cos(direction) + y_axis[1] * math.sin(direction)) - 1) < 1e-6
        )
    above = grasp_joints(kind, obj, base, geometry, robot.arm.poses["grasp"], "approach")
    assert _tcp(robot, above, base)[2] - target[2] == pytest.approx(geometry.clearance_m, abs=1e-5)


def test_an_object_out_of_reach_is_named_with_its_distance(robot: RobotConfig) -> None:
    with pytest.raises(CowpError, match=r"cannot reach the cup .* m out"):
        grasp_joints(
            "cup",
            ObjectPose(1.6, 0.0, 0.75, 0.0),
            Pose2D(0.0, 0.0, 0.0),
            arm_geometry(robot),
            robot.arm.poses["grasp"],
            "reach",
        )


class KnownPoses:
    description = "known poses"

    def __init__(self, base: Pose2D, objects: dict[str, ObjectPose]) -> None:
        self.base, self.objects = base, objects

    def base_pose(self) -> Pose2D | None:
        return self.base

    def object_pose(self, name: str) -> ObjectPose | None:
        return self.objects.get(name)

    def known_objects(self) -> dict[str, ObjectPose]:
        return dict(self.objects)


class Arm:
    """Base, arm and gripper at once: every motion succeeds; arm moves are recorded."""

    description = "arm"

    def __init__(self) -> None:
        self.moves: list[tuple[str, tuple[float, ...]]] = []
        self.via: dict[str, list[tuple[float, ...]]] = {}

    def move_to(self, name, positions, cancel, via=()):
        self.moves.append((name, tuple(positions)))
        self.via[name] = [tuple(v) for v in via]
        return MotionResult.success(name)

    def go_to(self, name, pose, cancel):
        return MotionResult.success(name)

    def open(self, cancel):
        return MotionResult.success("open")

    def holding(self, cancel):
        return MotionResult.success("holding")

    def close(self, cancel, *, expect_object):
        return MotionResult.success("closed")


def test_the_runner_grasps_where_the_object_is_and_puts_it_on_a_free_spot(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    counter = robot.base.locations["counter"]
    stopped = Pose2D(counter.x - 0.03, counter.y + 0.02, counter.yaw + 0.05)
    cup = ObjectPose(counter.x + 0.78, counter.y - 0.1, robot.surfaces.height, 0.0)
    arm = Arm()
    poses = KnownPoses(stopped, {"cup_1": cup})
    runner = SkillRunner(
        skill_map,
        Whereabouts(set(robot.base.locations), object_locations=skill_map.object_locations),
        Backends(arm, arm, arm, None, poses),
        locations=robot.base.locations,
        arm_poses=robot.arm.poses,
        geometry=arm_geometry(robot),
        surfaces=robot.surfaces,
    )
    assert runner.run("grasp_cup", ["cup_1"], threading.Event()).ok
    names = [name for name, _ in arm.moves]
    assert names == [
        "approach cup_1 (from its pose)",
        "reach cup_1 (from its pose)",
        "lift cup (straight up)",
        "carry",
    ]
    reached = dict(arm.moves)["reach cup_1 (from its pose)"]
    assert np.linalg.norm(_tcp(robot, reached, stopped) - grasp_point("cup", cup)[0]) < 1e-5
    arm.moves.clear()
    poses.base = robot.base.locations["table"]  # the drive to the table ended there
    assert runner.run("deliver_water", ["cup_1", "table_1"], threading.Event()).ok
    assert [name for name, _ in arm.moves][:3] == [
        "approach spot 1 at table (from its pose)",
        "reach spot 1 at table (from its pose)",
        "lift cup (straight up)",
    ]


def test_without_an_object_pose_the_grasp_goes_where_it_should_be_from_where_the_base_is(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    counter = robot.base.locations["counter"]
    stopped = Pose2D(counter.x + 0.03, counter.y - 0.02, counter.yaw + 0.05)
    arm = Arm()
    runner = _runner(robot, skill_map, arm, KnownPoses(stopped, {}))
    assert runner.run("grasp_cup", ["cup_1"], threading.Event()).ok
    names = [name for name, _ in arm.moves]
    assert names[:3] == ["carry", "approach cup_1 (where expected)", "reach cup_1 (where expected)"]
    # the calibrated spot (the first of the counter), reached from where the base stopped
    dx, dy = robot.surfaces.spots[0]
    c, s = math.cos(counter.yaw), math.sin(counter.yaw)
    spot = ObjectPose(
        counter.x + c * dx - s * dy, counter.y + s * dx + c * dy, robot.surfaces.height, 0.0
    )
    reached = _tcp(robot, dict(arm.moves)["reach cup_1 (where expected)"], stopped)
    assert np.linalg.norm(reached - grasp_point("cup", spot)[0]) < 1e-5


def test_without_any_pose_the_calibrated_poses_are_used(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    arm = Arm()
    runner = _runner(robot, skill_map, arm, None)
    assert runner.run("grasp_cup", ["cup_1"], threading.Event()).ok
    # the drive there first tucks the arm in
    assert [name for name, _ in arm.moves] == ["carry", "pre_grasp", "grasp", "pre_grasp", "carry"]
    assert arm.moves[2][1] == robot.arm.poses["grasp"]


def test_arm_geometry_agrees_with_the_physics_robot(robot: RobotConfig) -> None:
    from cowp_ros.physics.scene import ARM_MOUNT, TCP_FROM_TOOL0, WHEEL_RADIUS

    assert robot.arm.mount == pytest.approx(
        (ARM_MOUNT[0], ARM_MOUNT[1], WHEEL_RADIUS + ARM_MOUNT[2])
    )
    assert robot.gripper.tcp_from_tool0_m == pytest.approx(TCP_FROM_TOOL0)


def test_a_fallen_object_is_not_grasped_from_above(robot: RobotConfig) -> None:
    lying = ObjectPose(0.8, 0.13, robot.surfaces.height, 0.0, tilt=math.pi / 2)
    with pytest.raises(CowpError, match=r"not upright \(leaning 90 degrees\)"):
        grasp_joints(
            "bottle", lying, Pose2D(0.0, 0.0, 0.0), arm_geometry(robot),
            robot.arm.poses["grasp"], "reach",
        )  # fmt: skip


def _runner(robot: RobotConfig, skill_map: SkillMap, arm: Arm, poses) -> SkillRunner:
    return SkillRunner(
        skill_map,
        Whereabouts(
            set(robot.base.locations),
            location_aliases=skill_map.location_aliases,
            object_locations=skill_map.object_locations,
        ),
        Backends(arm, arm, arm, None, poses),
        locations=robot.base.locations,
        arm_poses=robot.arm.poses,
        carry_pose="carry",
        geometry=arm_geometry(robot),
        surfaces=robot.surfaces,
    )


class PulledFront(KnownPoses):
    """The cupboard's front follows the hand's pull by `follows` of it (0: stuck)."""

    def __init__(self, base: Pose2D, front: ObjectPose, arm: Arm, follows: float) -> None:
        super().__init__(base, {"cupboard_1": front})
        self.front, self.arm, self.follows = front, arm, follows

    def object_pose(self, name: str) -> ObjectPose | None:
        if not any(move.startswith("pull") for move, _ in self.arm.moves):
            return self.front
        shift = 0.15 * self.follows
        c, s = math.cos(self.front.yaw), math.sin(self.front.yaw)
        f = self.front
        return ObjectPose(f.x - c * shift, f.y - s * shift, f.z, f.yaw)


@pytest.mark.parametrize("follows, opened", [(1.0, True), (0.1, False)])
def test_a_front_is_pulled_along_its_axis_and_must_follow_the_hand(
    robot: RobotConfig, skill_map: SkillMap, follows: float, opened: bool
) -> None:
    at = robot.base.locations["cupboard"]
    stopped = Pose2D(at.x + 0.03, at.y - 0.02, at.yaw - 0.06)
    c, s = math.cos(at.yaw), math.sin(at.yaw)
    front = ObjectPose(at.x + c * 0.8, at.y + s * 0.8, robot.surfaces.height, at.yaw)
    arm = Arm()
    runner = _runner(robot, skill_map, arm, PulledFront(stopped, front, arm, follows))
    runner.world.base_location = "cupboard"
    outcome = runner.run("open_cupboard", ["cupboard_1"], threading.Event())
    assert outcome.ok is opened, outcome.message
    names = [name for name, _ in arm.moves]
    assert names[:3] == [
        "approach cupboard_1 (from its pose)",
        "reach cupboard_1 (from its pose)",
        "pull cupboard (pulling its front)",
    ]
    moves = dict(arm.moves)
    reached = _tcp(robot, moves["reach cupboard_1 (from its pose)"], stopped)
    pulled = _tcp(robot, moves["pull cupboard (pulling its front)"], stopped)
    # drawn 15 cm along the front's axis (toward the robot), not the base's
    assert pulled - reached == pytest.approx([-c * 0.15, -s * 0.15, 0.0], abs=1e-5)
    # the pads close on the bar, their lower edges clear of the front below it
    from cowp_ros.skills.object_shapes import FRONT_BLOCK, PAD_HALF_LENGTH_M

    assert reached[2] - PAD_HALF_LENGTH_M > front.z + FRONT_BLOCK[2]
    if opened:
        assert names[3:] == ["lift cupboard (straight up)", "carry"]
        lifted = _tcp(robot, moves["lift cupboard (straight up)"], stopped)
        assert lifted - pulled == pytest.approx([0.0, 0.0, arm_geometry(robot).clearance_m])
        assert runner.world.holding is None  # a gripped handle is not a held object
    else:
        assert "opened only 1.5 cm" in outcome.message
        assert "pull skill" not in outcome.message and "open skill" in outcome.message


def test_a_calibrated_pull_is_followed_by_the_carry_pose_not_pre_grasp(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    arm = Arm()
    runner = _runner(robot, skill_map, arm, None)
    runner.world.base_location = "cupboard"
    assert runner.run("open_cupboard", ["cupboard_1"], threading.Event()).ok
    assert [name for name, _ in arm.moves] == ["pre_grasp", "grasp", "pull", "carry", "carry"]


def test_a_square_block_is_closed_across_its_faces_not_its_corners(robot: RobotConfig) -> None:
    base = Pose2D(0.0, 0.0, 0.05)
    for yaw in (0.0, 0.4, -1.2):
        obj = ObjectPose(0.8, 0.1, robot.surfaces.height, yaw)
        joints = grasp_joints(
            "vacuum", obj, base, arm_geometry(robot), robot.arm.poses["grasp"], "reach"
        )
        y_axis = kinematics.forward(joints)[:3, 1]
        closing = math.atan2(y_axis[1], y_axis[0]) + base.yaw
        # along one of the block's faces' normals: a multiple of 90 degrees from its yaw
        off = (closing - yaw) % (math.pi / 2)
        assert min(off, math.pi / 2 - off) < 1e-6


def test_an_object_put_down_at_a_floor_location_goes_on_the_floor(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    area = robot.base.locations["dining_area"]
    arm = Arm()
    runner = _runner(robot, skill_map, arm, KnownPoses(area, {}))
    runner.world.picked("vacuum_1")
    runner.world.base_location = "dining_area"
    assert robot.surfaces.on_floor("dining_area")
    assert runner.run("put_down", ["vacuum_1", "area_1"], threading.Event()).ok
    moves = dict(arm.moves)
    reached = moves["reach spot 1 on the floor at dining_area (from its pose)"]
    target, _ = grasp_point(
        "vacuum", ObjectPose(0.0, 0.0, 0.01, 0.0)
    )  # the grasp point of a vacuum standing 1 cm above the floor
    assert _tcp(robot, reached, area)[2] == pytest.approx(target[2], abs=1e-5)


def test_a_motion_into_the_counter_is_refused_before_it_is_sent(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    from cowp_ros.skills.clearance import first_contact, furniture

    counter = robot.base.locations["counter"]
    boxes = furniture(robot.base.locations, robot.surfaces)
    geometry = arm_geometry(robot)
    cup = ObjectPose(counter.x + 0.8, counter.y + 0.13, robot.surfaces.height, 0.0)
    reach = grasp_joints("cup", cup, counter, geometry, robot.arm.poses["grasp"], "reach")
    above = grasp_joints("cup", cup, counter, geometry, robot.arm.poses["grasp"], "approach")
    assert (
        first_contact(above, reach, counter, geometry.mount, geometry.tcp_from_tool0_m, boxes)
        is None
    )
    # the same grasp 8 cm lower: the fingertips go into the counter
    sunk = ObjectPose(cup.x, cup.y, cup.z - 0.08, 0.0)
    low = grasp_joints("cup", sunk, counter, geometry, robot.arm.poses["grasp"], "reach")
    said = first_contact(above, low, counter, geometry.mount, geometry.tcp_from_tool0_m, boxes)
    assert said is not None and "would come within" in said and "counter's surface" in said
    # the runner refuses to send it, and says why
    arm = Arm()
    runner = _runner(robot, skill_map, arm, KnownPoses(counter, {"cup_1": sunk}))
    runner.world.base_location = "counter"
    outcome = runner.run("grasp_cup", ["cup_1"], threading.Event())
    assert not outcome.ok and "not sent: the move to reach cup_1" in outcome.message
    assert not any(name.startswith("reach") for name, _ in arm.moves)


def test_the_hand_goes_down_and_up_along_straight_lines(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    counter = robot.base.locations["counter"]
    stopped = Pose2D(counter.x - 0.05, counter.y + 0.04, counter.yaw + 0.1)
    cup = ObjectPose(counter.x + 0.8, counter.y + 0.15, robot.surfaces.height, 0.0)
    arm = Arm()
    runner = _runner(robot, skill_map, arm, KnownPoses(stopped, {"cup_1": cup}))
    runner.world.base_location = "counter"
    assert runner.run("grasp_cup", ["cup_1"], threading.Event()).ok
    moves = dict(arm.moves)
    above = _tcp(robot, moves["approach cup_1 (from its pose)"], stopped)
    down = _tcp(robot, moves["reach cup_1 (from its pose)"], stopped)
    for stage in ("reach cup_1 (from its pose)", "lift cup (straight up)"):
        inner = arm.via[stage]
        assert len(inner) >= 2, stage  # 12 cm in points 3 cm apart
        for joints in inner:  # every inner point on the vertical line, between its ends
            tcp = _tcp(robot, joints, stopped)
            assert np.linalg.norm(tcp[:2] - down[:2]) < 1e-5
            assert down[2] - 1e-6 < tcp[2] < above[2] + 1e-6
    assert arm.via["approach cup_1 (from its pose)"] == []  # from the carry pose: a joint move


def test_the_held_cup_goes_under_the_faucet_where_the_faucet_is(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    sink = robot.base.locations["sink"]
    stopped = Pose2D(sink.x + 0.03, sink.y - 0.04, sink.yaw - 0.08)
    c, s = math.cos(sink.yaw), math.sin(sink.yaw)
    faucet = ObjectPose(sink.x + 0.87 * c, sink.y + 0.87 * s, robot.surfaces.height, 0.0)
    arm = Arm()
    runner = _runner(robot, skill_map, arm, KnownPoses(stopped, {"faucet_1": faucet}))
    runner.world.picked("cup_1")
    runner.world.base_location = "sink"
    assert runner.run("fill_water", ["cup_1", "faucet_1"], threading.Event()).ok
    joints = dict(arm.moves)["under faucet_1 (from its pose)"]
    # the cup's grasp point, the cup standing 10 cm in front of the faucet toward the
    # base and 3 cm above the sink's surface
    dx, dy = stopped.x - faucet.x, stopped.y - faucet.y
    norm = math.hypot(dx, dy)
    cup = ObjectPose(
        faucet.x + 0.1 * dx / norm, faucet.y + 0.1 * dy / norm, faucet.z + 0.03, stopped.yaw
    )
    assert np.linalg.norm(_tcp(robot, joints, stopped) - grasp_point("cup", cup)[0]) < 1e-5
    # where the faucet's frame is not known: the calibrated pose
    arm = Arm()
    runner = _runner(robot, skill_map, arm, KnownPoses(stopped, {}))
    runner.world.picked("cup_1")
    runner.world.base_location = "sink"
    assert runner.run("fill_water", ["cup_1", "faucet_1"], threading.Event()).ok
    assert arm.moves[0][0] == "fill"
