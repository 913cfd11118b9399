"""Where the arm goes for a step: named poses, and motions computed from poses.

The skill runner sequences primitives; this part turns the ones that move the arm into
joint positions: robot.yaml's calibrated poses, or, where the base's pose (TF) and the
object's (its frame on TF, where the wrist depth camera saw it, or its location's
calibrated spot) are known, a grasp computed by the UR's closed-form inverse kinematics
from where the base really stopped. Hand motions onto and away from an object go in
straight lines; every computed motion is checked against the work surfaces before it is
sent (skills/clearance.py). It remembers what a step's later primitives need: the named
pose the arm is at (a drive first tucks the arm), the grasp `lift` raises from, what the
camera saw, and where the arm was last sent.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import threading
from collections.abc import Callable, Sequence

import numpy as np

from cowp_ros.errors import CowpError
from cowp_ros.skills import kinematics
from cowp_ros.skills.clearance import first_contact, furniture
from cowp_ros.skills.config import SurfaceConfig
from cowp_ros.skills.grasping import LOOK, ArmGeometry, grasp_joints
from cowp_ros.skills.interfaces import Backends, MotionResult, ObjectPose, Pose2D
from cowp_ros.skills.world import Whereabouts, object_class

# The calibrated poses a grasp (or a put-down) falls back on when the object's pose
# (or the base's) is not known: robot.yaml arm.poses, taught for the first spot.
PICK_POSES = {"approach": "pre_grasp", "reach": "grasp", "lift": "pre_grasp", "pull": "pull"}
PUT_POSES = {"approach": "pre_grasp", "reach": "place", "lift": "pre_grasp", "pull": "pull"}
# A pulled front must have followed the hand at least this share of the pull.
PULL_FOLLOWED = 0.5
PULL_SETTLE_S = 1.0
# A put-down spot is taken when an object stands this close to it, at its height.
OCCUPIED_M = 0.08
OCCUPIED_HEIGHT_M = 0.05
# A put-down object is let go this far above the surface.
PUT_DOWN_DROP_M = 0.01
# The wrist camera looks from this high above where an object is expected (the highest
# the arm reaches: further out, the view comes lower).
LOOK_HEIGHTS_M = (0.3, 0.24, 0.18)
# A straight hand motion passes through a point every this far (at most this many).
STRAIGHT_STEP_M = 0.03
MAX_STRAIGHT_POINTS = 8
MAX_STRAIGHT_JUMP_RAD = 0.5


class ArmMotions:
    """The arm's motions for the skill runner; see the module docstring."""

    def __init__(
        self,
        world: Whereabouts,
        backends: Backends,
        *,
        locations: dict[str, Pose2D],
        arm_poses: dict[str, tuple[float, ...]],
        carry_pose: str,
        geometry: ArmGeometry | None,
        surfaces: SurfaceConfig,
    ) -> None:
        self.world = world
        self.backends = backends
        self.locations = locations
        self.arm_poses = arm_poses
        self.carry_pose = carry_pose
        self.geometry = geometry
        self.surfaces = surfaces
        # The named pose the arm last reached (None: unknown, as at start or after a
        # failed move): a drive first brings the arm to the carry pose unless it is there.
        self.arm_at: str | None = None
        # The last grasp or put-down computed from poses, which `lift` raises the hand from.
        self._reached: tuple[str, ObjectPose, Pose2D] | None = None
        # The arm ended a pull at the calibrated pose: `lift` falls back on the carry
        # pose, never on pre_grasp, which would sweep the open hand through the handle.
        self._pulled = False
        # Where the wrist camera saw each object (the `look` primitive), this step.
        self.seen: dict[str, ObjectPose] = {}
        # The joint positions the arm was last sent to and reached (None: unknown), the
        # start of the next computed motion's clearance check.
        self._arm_q: tuple[float, ...] | None = None
        self._furniture = furniture(locations, surfaces)

    def expected(self, name: str) -> ObjectPose | None:
        """Where `name` should stand: its frame on TF, else the first spot of its
        location (the calibrated one), on the surface or the floor."""
        poses = self.backends.poses
        known = poses.object_pose(name) if poses is not None else None
        if known is not None:
            return known
        location = self.world.location_of(name)
        where = self.locations.get(location)
        if where is None:
            return None
        (dx, dy), height = self.surfaces.put_down_spot(location, 0)
        c, s = math.cos(where.yaw), math.sin(where.yaw)
        return ObjectPose(where.x + c * dx - s * dy, where.y + s * dx + c * dy, height, where.yaw)

    def look(self, name: str, cancel: threading.Event) -> MotionResult:
        """The wrist camera above where `name` should be; where it is seen is where the
        grasp goes. Skipped without a camera locator or without poses."""
        locator, poses = self.backends.locator, self.backends.poses
        if locator is None or poses is None or self.geometry is None:
            return MotionResult.success("no camera to look with")
        if poses.object_pose(name) is not None:  # a pose estimator already said
            return MotionResult.success(f"{name}'s pose is on TF")
        base, expected = poses.base_pose(), self.expected(name)
        if base is None or expected is None:
            return MotionResult.success(f"not looking: where {name} should be is unknown")
        kind = object_class(name)
        joints: tuple[float, ...] | None = None
        for height in LOOK_HEIGHTS_M:  # the highest view the arm reaches
            above = dataclasses.replace(self.geometry, clearance_m=height)
            try:
                joints = grasp_joints(
                    kind, expected, base, above, self.arm_poses["pre_grasp"], LOOK
                )
                break
            except CowpError:
                continue
        if joints is None:
            return MotionResult.success(f"no view of {name} from above within reach")
        moved = self.move_computed(f"look at {name}", joints, cancel)
        if not moved.ok:
            return moved
        found = locator.locate(name, kind, expected, cancel)
        if found is None:
            return MotionResult.failure(
                f"the wrist camera did not see {name} near where it should be "
                f"({expected.x:.2f}, {expected.y:.2f})"
            )
        self.seen[name.strip().lower()] = found
        off = math.hypot(found.x - expected.x, found.y - expected.y)
        return MotionResult.success(f"saw {name} {off * 100:.1f} cm from where expected")

    def grasp_again(self, name: str, missed: MotionResult, cancel: threading.Event) -> MotionResult:
        """A grasp computed from a pose that closed on nothing: look again, come down
        again where the camera now sees the object, close once more; else fail with
        both reasons."""
        if self.backends.locator is None or self._reached is None:
            return missed
        self._reached = None
        steps: list[Callable[[], MotionResult]] = [
            lambda: self.backends.gripper.open(cancel),
            lambda: self.look(name, cancel),
            lambda: self.stage("approach", name, cancel),
            lambda: self.stage("reach", name, cancel),
            lambda: self.backends.gripper.close(cancel, expect_object=True),
        ]
        for step in steps:
            outcome = step()
            if not outcome.ok:
                return type(outcome)(
                    outcome.status,
                    f"missed {name} ({missed.message}); looking again: {outcome.message}",
                )
        return MotionResult.success(f"grasped {name} on a second approach: {outcome.message}")

    def stage(self, stage: str, name: str, cancel: threading.Event) -> MotionResult:
        """approach / reach / lift an object to pick it, or the spot to put the held one
        down: computed from the poses when they are known, else the calibrated pose."""
        held = self.world.holding
        putting = held is not None and name.strip().lower() != held
        fallback = (PUT_POSES if putting else PICK_POSES)[stage]
        if stage == "lift" and self._pulled:
            fallback = self.carry_pose or "pull"
        self._pulled = False
        handle = self._reached[1] if stage == "pull" and self._reached is not None else None
        computed = self._computed(stage, name, held if putting else None, fallback)
        if computed is None:
            outcome = self.move_arm(fallback, cancel)
            self._pulled = stage == "pull" and outcome.ok
            return outcome
        positions, target = computed
        # down onto the object, up with it, the handle along its front: straight lines
        straight = stage in ("reach", "lift", "pull")
        outcome = self.move_computed(f"{stage} {target}", positions, cancel, straight=straight)
        if outcome.ok and handle is not None:
            return self._front_followed(name, handle, cancel)
        return outcome

    def _front_followed(
        self, name: str, handle: ObjectPose, cancel: threading.Event
    ) -> MotionResult:
        """After a pull: the front (its frame on TF) moved with the hand, or the step
        failed (the handle slipped out of the fingers, the front is stuck)."""
        poses = self.backends.poses
        pull = self.geometry.pull_m if self.geometry is not None else 0.0
        moved = 0.0
        waited = 0.0
        while poses is not None:
            now = poses.object_pose(name)
            if now is not None:
                moved = math.hypot(now.x - handle.x, now.y - handle.y)
                if moved >= PULL_FOLLOWED * pull:
                    return MotionResult.success(f"{name} pulled {moved * 100:.0f} cm open")
            if waited >= PULL_SETTLE_S or cancel.wait(0.05):
                break
            waited += 0.05
        if cancel.is_set():
            return MotionResult.canceled(f"canceled while checking that {name} opened")
        return MotionResult.failure(
            f"the hand moved {pull * 100:.0f} cm but {name} opened only {moved * 100:.1f} cm "
            "(the handle slipped from the fingers, or the front is stuck)"
        )

    def _computed(
        self, stage: str, name: str, putting: str | None, fallback: str
    ) -> tuple[tuple[float, ...], str] | None:
        """Joint positions for the stage from the poses, or None to use `fallback`."""
        poses = self.backends.poses
        if poses is None or self.geometry is None:
            return None
        if stage == "lift" and self._reached is not None:
            kind, reached, stood = self._reached
            self._reached = None
            joints = grasp_joints(
                kind, reached, stood, self.geometry, self.arm_poses[fallback], "lift"
            )
            return joints, f"{kind} (straight up)"
        if stage == "pull" and self._reached is not None:
            kind, reached, stood = self._reached
            joints = grasp_joints(
                kind, reached, stood, self.geometry, self.arm_poses[fallback], "pull"
            )
            c, s = math.cos(reached.yaw), math.sin(reached.yaw)
            pulled = ObjectPose(
                reached.x - c * self.geometry.pull_m,
                reached.y - s * self.geometry.pull_m,
                reached.z,
                reached.yaw,
                reached.tilt,
            )
            self._reached = (kind, pulled, stood)
            return joints, f"{kind} (pulling its front)"
        base = poses.base_pose()
        if base is None:
            return None
        if putting is not None:
            location = self.world.location_of(name)
            where = self.locations.get(location)
            if where is None:
                return None
            standing = [p for n, p in poses.known_objects().items() if n != putting]
            spot = free_spot(
                self.surfaces, location, where, self.world.placed_at(location), standing
            )
            (dx, dy), height = self.surfaces.put_down_spot(location, spot)
            c, s = math.cos(where.yaw), math.sin(where.yaw)
            target = ObjectPose(
                where.x + c * dx - s * dy,
                where.y + s * dx + c * dy,
                height + PUT_DOWN_DROP_M,
                where.yaw,
            )
            ground = "on the floor " if self.surfaces.on_floor(location) else ""
            kind = object_class(putting)
            said = f"spot {spot + 1} {ground}at {location} (from its pose)"
        else:
            key = name.strip().lower()
            found, said = self.seen.get(key), f"{name} (as seen)"
            if found is None:
                found, said = poses.object_pose(name), f"{name} (from its pose)"
            if found is None:  # where it should be, from where the base stopped
                found, said = self.expected(name), f"{name} (where expected)"
            if found is None:
                return None
            target, kind = found, object_class(name)
        joints = grasp_joints(kind, target, base, self.geometry, self.arm_poses[fallback], stage)
        if stage == "reach":
            self._reached = (kind, target, base)
        return joints, said

    def move_arm(self, pose: str, cancel: threading.Event) -> MotionResult:
        self.arm_at = None
        self._arm_q = None
        outcome = self.backends.arm.move_to(pose, self.arm_poses[pose], cancel)
        if outcome.ok:
            self.arm_at = pose
            self._arm_q = self.arm_poses[pose]
        return outcome

    def move_computed(
        self,
        name: str,
        positions: tuple[float, ...],
        cancel: threading.Event,
        *,
        straight: bool = False,
        via: Sequence[tuple[float, ...]] = (),
    ) -> MotionResult:
        """A motion computed from poses, `straight`: the hand along a line (through
        inner points solved one by one), else through `via` (joint positions) or a
        joint-space move; checked against the known furniture before it is sent (from
        where the arm was last sent, else the goal pose alone)."""
        self.arm_at = None
        if straight and self._arm_q:
            via = straight_line(self._arm_q, positions)
        via = list(via)
        contact = self.contact([*via, positions])
        if contact is not None:
            self._arm_q = None
            return MotionResult.failure(f"not sent: the move to {name}: {contact}")
        self._arm_q = None
        if via:
            outcome = self.backends.arm.move_to(name, positions, cancel, via=via)
        else:
            outcome = self.backends.arm.move_to(name, positions, cancel)
        if outcome.ok:
            self._arm_q = tuple(positions)
        return outcome

    def contact(self, waypoints: Sequence[tuple[float, ...]]) -> str | None:
        """Where the joint-space path from where the arm was last sent (else from the
        first waypoint) through `waypoints` would touch the known furniture, or None
        (also when the base's pose is not known: nothing to check against)."""
        poses = self.backends.poses
        base = poses.base_pose() if poses is not None else None
        if base is None or self.geometry is None or not waypoints:
            return None
        path = [self._arm_q if self._arm_q is not None else waypoints[0], *waypoints]
        for start, goal in itertools.pairwise(path):
            found = first_contact(
                start,
                goal,
                base,
                self.geometry.mount,
                self.geometry.tcp_from_tool0_m,
                self._furniture,
            )
            if found is not None:
                return found
        return None


def free_spot(
    surfaces: SurfaceConfig,
    location: str,
    where: Pose2D,
    first: int,
    standing: Sequence[ObjectPose],
) -> int:
    """The first put-down spot at `location` from `first` on with nothing standing on
    it (no known object within OCCUPIED_M of it, at its height): a spot the scenario or
    a person filled is not put down on. `first` when every spot is taken."""
    count = len(surfaces.floor_spots if surfaces.on_floor(location) else surfaces.spots)
    c, s = math.cos(where.yaw), math.sin(where.yaw)
    for index in range(first, first + count):
        (dx, dy), height = surfaces.put_down_spot(location, index)
        x, y = where.x + c * dx - s * dy, where.y + s * dx + c * dy
        if not any(
            math.hypot(p.x - x, p.y - y) < OCCUPIED_M and abs(p.z - height) < OCCUPIED_HEIGHT_M
            for p in standing
        ):
            return index
    return first


def straight_line(
    start: tuple[float, ...], goal: tuple[float, ...], step_m: float = STRAIGHT_STEP_M
) -> list[tuple[float, ...]]:
    """Joint positions of inner points on the straight line of the flange from `start`
    to `goal` (the same orientation at both ends), each solved nearest the one before;
    [] when the line is short, the orientation turns, or a point has no solution (the
    move is then a joint-space one)."""
    first, last = kinematics.forward(start), kinematics.forward(goal)
    turn = np.linalg.norm(first[:3, :3] - last[:3, :3])
    length = float(np.linalg.norm(last[:3, 3] - first[:3, 3]))
    if turn > 0.05 or length < 2 * step_m:
        return []
    count = min(MAX_STRAIGHT_POINTS, math.ceil(length / step_m) - 1)
    points: list[tuple[float, ...]] = []
    reference = start
    for k in range(1, count + 1):
        target = last.copy()
        target[:3, 3] = first[:3, 3] + (last[:3, 3] - first[:3, 3]) * k / (count + 1)
        solutions = kinematics.inverse(target, reference)
        if not solutions or solutions[0].distance > MAX_STRAIGHT_JUMP_RAD:
            return []  # no solution, or only on another branch of the arm
        reference = solutions[0].positions
        points.append(reference)
    return points
