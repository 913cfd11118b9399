"""Run one plan step: resolve its skill, then drive each primitive through a backend.

Plain Python over the backend protocols, so the whole sequencing (what runs, what is
skipped, what the world learns, how failure and cancel end a step) is testable with
fakes and identical on every profile. A step stops at its first failed or canceled
primitive; the message says which primitive of which skill failed and why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from cowp_ros.errors import CowpError
from cowp_ros.skills.arm_motions import ArmMotions
from cowp_ros.skills.config import RobotConfig, SurfaceConfig
from cowp_ros.skills.container_motions import ContainerMotions
from cowp_ros.skills.grasping import STAGES, ArmGeometry
from cowp_ros.skills.interfaces import Backends, MotionResult, Pose2D, Status
from cowp_ros.skills.skill_map import Primitive, SkillCall, SkillMap
from cowp_ros.skills.world import Whereabouts, object_class

# progress in 0..1, and what the robot is doing now in words
Report = Callable[[float, str], None]

# The skill `fetch: ROLE` runs to pick up an object the robot does not hold yet, and
# the one it first puts a held object down with.
FETCH_SKILL = "pick"
PUT_DOWN_SKILL = "place"


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
        geometry: ArmGeometry | None = None,
        surfaces: SurfaceConfig | None = None,
    ) -> None:
        self.skill_map = skill_map
        self.world = world
        self.backends = backends
        self.locations = locations
        self.arm_poses = arm_poses
        self.carry_pose = carry_pose
        self.geometry = geometry
        self.surfaces = surfaces or SurfaceConfig()
        self.motions = ArmMotions(
            world,
            backends,
            locations=locations,
            arm_poses=arm_poses,
            carry_pose=carry_pose,
            geometry=geometry,
            surfaces=self.surfaces,
        )
        self.containers = ContainerMotions(self.motions)

    @property
    def arm_at(self) -> str | None:
        """The named pose the arm last reached (None: unknown)."""
        return self.motions.arm_at

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
        self.motions.seen.clear()  # what the camera saw belongs to the step that looked
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
                tucked = self.motions.move_arm(self.carry_pose, cancel)
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
            return self.motions.move_arm(value, cancel)
        if kind in STAGES:
            return self.motions.stage(kind, call.roles[value], cancel)
        if kind == "gripper":
            if value == "open":
                return self.backends.gripper.open(cancel)
            return self.backends.gripper.close(cancel, expect_object=False)
        if kind == "grasp":
            outcome = self.backends.gripper.close(cancel, expect_object=True)
            if not outcome.ok and outcome.status is not Status.CANCELED:
                outcome = self.motions.grasp_again(call.roles[value], outcome, cancel)
            if outcome.ok:
                self.world.picked(call.roles[value])
            return outcome
        if kind == "look":
            return self.motions.look(call.roles[value], cancel)
        if kind == "under":
            return self.containers.under(call.roles[value], cancel)
        if kind == "pour_into":
            return self.containers.pour(call.roles[value], cancel)
        if kind == "grip":  # a handle: something must be between the fingers
            return self.backends.gripper.close(cancel, expect_object=True)
        if kind == "fetch":
            return self._fetch(call.roles[value], cancel)
        if kind == "holding":
            outcome = self.backends.gripper.holding(cancel)
            if not outcome.ok and outcome.status is not Status.CANCELED:
                self.world.dropped(call.roles[value])
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

    def _fetch(self, name: str, cancel: threading.Event) -> MotionResult:
        """Pick `name` up with the `pick` skill unless the robot already holds it: a
        PDDL action that puts an object somewhere need not have a step that grasps it.
        An object held instead is put down where the base is first."""
        if self.world.holding == name.strip().lower():
            return MotionResult.success(f"already holding {name}")
        held, here = self.world.holding, self.world.base_location
        if held is not None:  # put it down here first: opening the hand would drop it
            if here is None:
                return MotionResult.failure(
                    f"cannot pick up {name}: the hand holds {held}, and the base is not at a "
                    "named location to put it down"
                )
            put = self.skill_map.call_skill(PUT_DOWN_SKILL, [f"object={held}", f"location={here}"])
            for primitive in put.skill.steps:
                if cancel.is_set():
                    return MotionResult.canceled(f"putting {held} down canceled")
                outcome = self._run_primitive(primitive, put, cancel)
                if not outcome.ok:
                    return type(outcome)(
                        outcome.status,
                        f"putting {held} down to free the hand ({describe(primitive, put)}): "
                        f"{outcome.message}",
                    )
        call = self.skill_map.call_skill(FETCH_SKILL, [f"object={name}"])
        for primitive in call.skill.steps:
            if cancel.is_set():
                return MotionResult.canceled(f"fetching {name} canceled")
            outcome = self._run_primitive(primitive, call, cancel)
            if not outcome.ok:
                return type(outcome)(
                    outcome.status,
                    f"fetching {name} ({describe(primitive, call)}): {outcome.message}",
                )
        return MotionResult.success(f"fetched {name}")


def arm_geometry(robot: RobotConfig) -> ArmGeometry:
    """The arm's mount and grasp point as robot.yaml states them."""
    return ArmGeometry(robot.arm.mount, robot.gripper.tcp_from_tool0_m)


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
    if kind == "under":
        return f"holding it under {call.roles.get(value, value)}"
    if kind == "pour_into":
        return f"pouring into {call.roles.get(value, value)}"
    if kind == "look":
        return f"looking for {call.roles.get(value, value)} with the wrist camera"
    if kind == "grip":
        return f"gripping the handle of {call.roles.get(value, value)}"
    if kind == "holding":
        return f"checking the grasp of {call.roles.get(value, value)}"
    if kind == "fetch":
        return f"fetching {call.roles.get(value, value)} unless held"
    if kind in STAGES:
        verb = {
            "approach": "approaching",
            "reach": "reaching",
            "lift": "lifting at",
            "pull": "pulling",
        }[kind]
        return f"{verb} {call.roles.get(value, value)}"
    if kind == "release":
        return f"releasing {call.roles.get(value, value)}"
    return f"looking for {call.roles.get(value, value)}"
