"""Run one plan step: resolve its skill, then drive each primitive through a backend.

Plain Python over the backend protocols, so the whole sequencing (what runs, what is
skipped, what the world learns, how failure and cancel end a step) is testable with
fakes and identical on every profile. A step stops at its first failed or canceled
primitive; the message says which primitive of which skill failed and why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from cowp_ros.errors import CowpError
from cowp_ros.skills.interfaces import (
    ArmBackend,
    BaseBackend,
    CameraBackend,
    GripperBackend,
    MotionResult,
    Pose2D,
)
from cowp_ros.skills.skill_map import Primitive, SkillCall, SkillMap
from cowp_ros.skills.world import Whereabouts, object_class

# progress in 0..1, and what the robot is doing now in words
Report = Callable[[float, str], None]


@dataclass
class Backends:
    base: BaseBackend
    arm: ArmBackend
    gripper: GripperBackend
    camera: CameraBackend | None  # None: detections are not verified (find = go and look)


class SkillRunner:
    """Turns plan steps into backend calls, keeping the `Whereabouts` up to date."""

    def __init__(
        self,
        skill_map: SkillMap,
        world: Whereabouts,
        backends: Backends,
        *,
        locations: dict[str, Pose2D],
        arm_poses: dict[str, tuple[float, ...]],
        carry_pose: str = "",
    ) -> None:
        self.skill_map = skill_map
        self.world = world
        self.backends = backends
        self.locations = locations
        self.arm_poses = arm_poses
        self.carry_pose = carry_pose
        # The named pose the arm last reached (None: unknown, as at start or after a
        # failed move): a drive first brings the arm to the carry pose unless it is there.
        self.arm_at: str | None = None

    def resolve(self, action: str, arguments: list[str] | tuple[str, ...]) -> SkillCall:
        return self.skill_map.resolve(action, arguments)

    def run(
        self,
        action: str,
        arguments: list[str] | tuple[str, ...],
        cancel: threading.Event,
        report: Report | None = None,
    ) -> MotionResult:
        """Execute one step; never raises for a failure the user can act on."""
        step = f"{action}({', '.join(arguments)})"
        try:
            call = self.resolve(action, arguments)
        except CowpError as err:
            return MotionResult.failure(str(err))
        primitives = call.skill.steps
        for index, primitive in enumerate(primitives):
            if cancel.is_set():
                return MotionResult.canceled(f"{step} canceled before {describe(primitive, call)}")
            if report is not None:
                report(index / len(primitives), describe(primitive, call))
            try:
                outcome = self._run_primitive(primitive, call, cancel)
            except CowpError as err:
                outcome = MotionResult.failure(str(err))
            if not outcome.ok:
                return type(outcome)(
                    outcome.status,
                    f"{step} [{call.skill.name} skill, {describe(primitive, call)}]: "
                    f"{outcome.message}",
                )
        if report is not None:
            report(1.0, f"done {step}")
        return MotionResult.success(f"{step} done ({call.skill.name} skill, {call.matched_by})")

    def _run_primitive(
        self, primitive: Primitive, call: SkillCall, cancel: threading.Event
    ) -> MotionResult:
        kind, value = primitive.kind, primitive.value
        if kind == "navigate":
            target = self.world.location_of(call.roles[value])
            if target == self.world.base_location:
                return MotionResult.success(f"already at {target}")
            pose = self.locations.get(target)
            if pose is None:
                raise CowpError(f"location '{target}' has no pose in robot.yaml base.locations")
            if self.carry_pose and self.arm_at != self.carry_pose:
                tucked = self._move_arm(self.carry_pose, cancel)
                if not tucked.ok:
                    return type(tucked)(
                        tucked.status,
                        f"arm not in the carry pose, base kept still: {tucked.message}",
                    )
            outcome = self.backends.base.go_to(target, pose, cancel)
            # After a failed or canceled drive the base is somewhere in between.
            self.world.base_location = target if outcome.ok else None
            return outcome
        if kind == "arm":
            return self._move_arm(value, cancel)
        if kind == "gripper":
            if value == "open":
                return self.backends.gripper.open(cancel)
            return self.backends.gripper.close(cancel, expect_object=False)
        if kind == "grasp":
            outcome = self.backends.gripper.close(cancel, expect_object=True)
            if outcome.ok:
                self.world.picked(call.roles[value])
            return outcome
        if kind == "release":
            outcome = self.backends.gripper.open(cancel)
            if outcome.ok:
                self.world.released(call.roles[value])
            return outcome
        if kind == "detect":
            if self.backends.camera is None:
                return MotionResult.success("detections not verified")
            name = object_class(call.roles[value])
            return self.backends.camera.find(
                self.skill_map.detection_classes.get(name, name), cancel
            )
        raise CowpError(f"unknown primitive '{kind}'")  # load_skill_map rejects these

    def _move_arm(self, pose: str, cancel: threading.Event) -> MotionResult:
        self.arm_at = None
        outcome = self.backends.arm.move_to(pose, self.arm_poses[pose], cancel)
        if outcome.ok:
            self.arm_at = pose
        return outcome


def describe(primitive: Primitive, call: SkillCall) -> str:
    """What a primitive does, in words, for feedback and failure messages."""
    kind, value = primitive.kind, primitive.value
    if kind == "navigate":
        return f"navigating to {call.roles.get(value, value)}"
    if kind == "arm":
        return f"moving arm to {value}"
    if kind == "gripper":
        return f"{'opening' if value == 'open' else 'closing'} gripper"
    if kind == "grasp":
        return f"grasping {call.roles.get(value, value)}"
    if kind == "release":
        return f"releasing {call.roles.get(value, value)}"
    return f"looking for {call.roles.get(value, value)}"
