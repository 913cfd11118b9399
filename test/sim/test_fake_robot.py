"""The simulated robot moves the way the skill backends expect real hardware to."""

from __future__ import annotations

import math

import pytest

from cowp_ros.sim.fake_robot import ArmSim, BaseSim, GripperSim

JOINTS = ["a", "b", "c"]


def run(thing, seconds: float, dt: float = 0.05) -> None:
    for _ in range(round(seconds / dt)):
        thing.step(dt)


def test_base_drives_to_goal_then_turns_and_takes_distance_over_speed() -> None:
    base = BaseSim(speed_mps=0.5, turn_rate_rps=1.0)
    base.set_goal(2.0, 0.0, math.pi / 2)
    run(base, 2.0)
    assert base.x == pytest.approx(1.0, abs=1e-6) and base.goal is not None
    run(base, 2.0 + 1.7)
    assert (base.x, base.y) == pytest.approx((2.0, 0.0))
    assert base.yaw == pytest.approx(math.pi / 2)
    assert base.goal is None


def test_arm_interpolates_through_points_in_the_trajectorys_joint_order() -> None:
    arm = ArmSim(JOINTS, [0.0, 0.0, 0.0])
    arm.follow(["c", "a", "b"], [(2.0, [3.0, 1.0, 2.0])])
    run(arm, 1.0)
    assert arm.positions == pytest.approx([0.5, 1.0, 1.5])
    assert arm.moving
    run(arm, 1.1)
    assert arm.positions == pytest.approx([1.0, 2.0, 3.0])
    assert not arm.moving


def test_arm_rejects_a_trajectory_for_other_joints() -> None:
    with pytest.raises(ValueError):
        ArmSim(JOINTS, [0.0] * 3).follow(["x", "y", "z"], [(1.0, [0.0] * 3)])


def test_gripper_stops_on_an_object_and_closes_fully_on_nothing() -> None:
    gripper = GripperSim(object_stop_m=0.012)
    gripper.command(0.0)
    run(gripper, 2.0)
    assert gripper.position == pytest.approx(0.012)
    empty = GripperSim()
    empty.command(0.0)
    run(empty, 2.0)
    assert empty.position == pytest.approx(0.0)
    empty.command(1.0)  # clamped to the stroke
    run(empty, 2.0)
    assert empty.position == pytest.approx(0.025)
