"""Where the arm takes a held container: under a source (a faucet) and over a target to
pour into, computed from their poses and where the base stopped.

Both fall back on robot.yaml's calibrated poses (`fill`; `pre_grasp`, `pour`,
`pre_grasp`) when the poses are not known, as every computed motion of the skill layer
does. A pour is verified where a pose source can say so: the held object must have
tipped with the hand (it is still in the fingers and past level), else the step fails
before the hand turns back.
"""

from __future__ import annotations

import math
import threading

from cowp_ros.errors import CowpError
from cowp_ros.skills.arm_motions import ArmMotions
from cowp_ros.skills.grasping import grasp_joints
from cowp_ros.skills.interfaces import MotionResult, ObjectPose
from cowp_ros.skills.pouring import pour_paths
from cowp_ros.skills.world import object_class

# The held container goes this far in front of a source (a faucet's frame, toward
# the base) and this high above what the source stands on; the calibrated pose else.
UNDER_OFFSET_M = 0.1
UNDER_CLEARANCE_M = 0.03
UNDER_POSE = "fill"
# The calibrated pour: above the target, tipped, back above it.
POUR_POSES = ("pre_grasp", "pour", "pre_grasp")
# The held object counts as tipped when its axis leans at least this far from upright.
TIPPED_RAD = math.radians(80)
# The container is held tipped this long (the drink runs out).
POUR_HOLD_S = 1.0


class ContainerMotions:
    """The held container under a source and over a target; see the module docstring."""

    def __init__(self, motions: ArmMotions) -> None:
        self.motions = motions

    def under(self, name: str, cancel: threading.Event) -> MotionResult:
        """The held container under `name` (a faucet): in front of its frame on TF, on
        the side the base stands, just above the surface; else the calibrated pose."""
        m = self.motions
        poses, held = m.backends.poses, m.world.holding
        source = poses.object_pose(name) if poses is not None else None
        base = poses.base_pose() if poses is not None else None
        if source is None or base is None or held is None or m.geometry is None:
            return m.move_arm(UNDER_POSE, cancel)
        dx, dy = base.x - source.x, base.y - source.y
        norm = math.hypot(dx, dy) or 1.0
        target = ObjectPose(
            source.x + UNDER_OFFSET_M * dx / norm,
            source.y + UNDER_OFFSET_M * dy / norm,
            source.z + UNDER_CLEARANCE_M,
            base.yaw,
        )
        kind = object_class(held)
        joints = grasp_joints(kind, target, base, m.geometry, m.arm_poses[UNDER_POSE], "reach")
        return m.move_computed(f"under {name} (from its pose)", joints, cancel)

    def pour(self, name: str, cancel: threading.Event) -> MotionResult:
        """Pour the held container into `name`: its mouth over `name`'s opening, tipped
        past level and back; the calibrated poses where the poses are not known."""
        m = self.motions
        poses, held = m.backends.poses, m.world.holding
        base = poses.base_pose() if poses is not None else None
        target = m.expected(name)
        if base is None or target is None or held is None or m.geometry is None:
            return self._calibrated(cancel)
        reference = m.arm_poses[POUR_POSES[0]]
        try:
            paths = pour_paths(
                object_class(held), object_class(name), target, base, m.geometry, reference
            )
        except CowpError as err:
            return MotionResult.failure(str(err))
        # the first side whose whole motion, there and back, clears the furniture
        blocked: list[str] = []
        for path in paths:
            contact = m.contact([path.above, *path.tips])
            if contact is None:
                break
            blocked.append(f"tipped {path.side}: {contact}")
        else:
            return MotionResult.failure(
                f"not sent: no pour over {name} clears: {'; '.join(blocked)}"
            )
        over = m.move_computed(f"over {name} (from its pose)", path.above, cancel)
        if not over.ok:
            return over
        tipped = m.move_computed(
            f"tipping {held} over {name}", path.tips[-1], cancel, via=path.tips[:-1]
        )
        if not tipped.ok:
            return tipped
        checked = self._tipped_check(held, name)
        if not checked.ok:
            return checked
        if cancel.wait(POUR_HOLD_S):
            return MotionResult.canceled(f"pouring into {name} canceled")
        back = m.move_computed(
            f"{held} upright over {name}", path.above, cancel, via=path.tips[-2::-1]
        )
        if not back.ok:
            return back
        still = m.backends.gripper.holding(cancel)
        if not still.ok:
            m.world.dropped(held)
            return type(still)(still.status, f"after pouring into {name}: {still.message}")
        return MotionResult.success(
            f"poured {held} into {name} ({checked.message}; tipped {path.side})"
        )

    def _tipped_check(self, held: str, name: str) -> MotionResult:
        """The held object leans past level with the hand (read from its pose, where a
        pose source has one); a container that stayed upright or fell is a failed pour."""
        poses = self.motions.backends.poses
        now = poses.object_pose(held) if poses is not None else None
        if now is None:
            return MotionResult.success("its pose is not known: the hand's tip assumed")
        if now.tilt < TIPPED_RAD:
            return MotionResult.failure(
                f"the hand tipped over {name} but {held} leans only "
                f"{math.degrees(now.tilt):.0f} degrees (it slipped in the fingers, or fell)"
            )
        return MotionResult.success(f"{held} tipped {math.degrees(now.tilt):.0f} degrees")

    def _calibrated(self, cancel: threading.Event) -> MotionResult:
        for pose in POUR_POSES:
            outcome = self.motions.move_arm(pose, cancel)
            if not outcome.ok:
                return outcome
        return MotionResult.success("poured at the calibrated pose")
