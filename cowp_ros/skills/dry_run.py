"""Backends that move nothing and say what they would command.

`cowp skill NAME ...` runs a skill through the real runner and skill map with these,
so a person sees, before the robot moves, which location pose the base would drive to,
which joint values each arm pose is, and what the gripper would do: the values to
check against the calibrated robot.yaml. Every call succeeds.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.interfaces import Backends, MotionResult, Pose2D


class DryRunLog:
    """The commands, in order, as sentences."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, line: str) -> MotionResult:
        self.lines.append(line)
        return MotionResult.success(line)


class DryRunBase:
    def __init__(self, robot: RobotConfig, log: DryRunLog) -> None:
        self.robot, self.log = robot, log
        self.description = "dry run (base)"

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> MotionResult:
        frame = self.robot.base.frame_id
        return self.log.add(
            f"base: drive to {name} at x {pose.x:.2f} m, y {pose.y:.2f} m, "
            f"yaw {pose.yaw:.2f} rad ({frame}; robot.yaml base.locations.{name})"
        )


class DryRunArm:
    def __init__(self, robot: RobotConfig, log: DryRunLog) -> None:
        self.robot, self.log = robot, log
        self.description = "dry run (arm)"

    def move_to(
        self,
        name: str,
        positions: Sequence[float],
        cancel: threading.Event,
        via: Sequence[Sequence[float]] = (),
    ) -> MotionResult:
        joints = ", ".join(
            f"{joint} {value:+.3f}"
            for joint, value in zip(self.robot.arm.joint_names, positions, strict=True)
        )
        through = f" through {len(via)} points" if via else ""
        return self.log.add(
            f"arm: move to pose '{name}'{through} ({joints} rad; robot.yaml arm.poses)"
        )


class DryRunGripper:
    def __init__(self, robot: RobotConfig, log: DryRunLog) -> None:
        self.robot, self.log = robot, log
        self.description = "dry run (gripper)"

    def open(self, cancel: threading.Event) -> MotionResult:
        return self.log.add(
            f"gripper: open to {self.robot.gripper.open_position_m * 1000:.1f} mm per finger"
        )

    def close(self, cancel: threading.Event, *, expect_object: bool) -> MotionResult:
        threshold = self.robot.gripper.grasp_threshold_m * 1000
        expectation = (
            f"a grasp only if the fingers stop above {threshold:.1f} mm"
            if expect_object
            else "nothing expected between the fingers"
        )
        return self.log.add(f"gripper: close ({expectation})")

    def holding(self, cancel: threading.Event) -> MotionResult:
        threshold = self.robot.gripper.grasp_threshold_m * 1000
        return self.log.add(f"gripper: check the fingers still rest above {threshold:.1f} mm")


class DryRunCamera:
    def __init__(self, log: DryRunLog) -> None:
        self.log = log
        self.description = "dry run (detections)"

    def find(self, class_name: str, cancel: threading.Event) -> MotionResult:
        return self.log.add(f"camera: wait for the detector to report a {class_name}")


def dry_run_backends(robot: RobotConfig, log: DryRunLog, *, verify_detections: bool) -> Backends:
    return Backends(
        base=DryRunBase(robot, log),
        arm=DryRunArm(robot, log),
        gripper=DryRunGripper(robot, log),
        camera=DryRunCamera(log) if verify_detections else None,
    )
