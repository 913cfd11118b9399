"""A pour computed from where the target stands and where the base stopped.

A calibrated pour pose cannot tilt anything: with the Hand-E pointing down, turning the
last wrist joint spins a held bottle about its own axis. A pour is instead a rotation
of the whole hand about a horizontal axis through the held container's mouth, kept
above the target's opening: the mouth stays where the drink must fall while the
container tips past horizontal and the hand swings around it.

The held container is taken as grasped from above (cowp_ros/skills/object_shapes.py:
its grasp point below the top), so its mouth is the top's centre above the grasp
point. It is brought upright with its mouth `above_m` over the target's rim (the
target at its frame on TF, or where it should be), then tipped in steps to `angle_rad`
toward a side the arm can reach: toward the robot first, then either side, then away
(the hand ends on that side of the target, the container's foot on the other). Every
step is solved by UR's closed-form inverse kinematics nearest the one before, so the
controller follows the rotation and not some other joint-space path; the way back is
the same points in reverse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cowp_ros.errors import CowpError
from cowp_ros.skills import kinematics
from cowp_ros.skills.grasping import ArmGeometry
from cowp_ros.skills.interfaces import ObjectPose, Pose2D
from cowp_ros.skills.object_shapes import shape_of

# The held container's foot clears the target's rim by this much, upright and while it
# tips (the mouth comes down to its pouring height as the foot swings up and away).
FOOT_CLEARANCE_M = 0.05
# How far the container tips from upright, and over how many solved steps.
POUR_ANGLE_RAD = math.radians(110)
POUR_STEPS = 6
# The mouth this high above the target's rim while it pours: the lowest the arm can
# tip at without its forearm coming down onto the surface (far out, the elbow drops).
ABOVE_RIM_M = (0.08, 0.12, 0.16)
# Successive solved steps may differ by at most this on any joint (else the solution is
# on another branch of the arm, and the controller would not follow the rotation).
MAX_STEP_JUMP_RAD = 0.6
# The sides to tip toward, in the base's frame (x ahead, y left): where the hand ends.
SIDES = (("toward the robot", (-1.0, 0.0)), ("left", (0.0, 1.0)), ("right", (0.0, -1.0)),
         ("away", (1.0, 0.0)))  # fmt: skip


@dataclass(frozen=True)
class PourPath:
    """Joint positions: above the target upright, then each tipping step in turn."""

    above: tuple[float, ...]
    tips: tuple[tuple[float, ...], ...]
    side: str
    mouth: tuple[float, float, float]  # where the mouth pours from, in the map


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix about a unit `axis` (Rodrigues)."""
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def pour_paths(
    held_kind: str,
    target_kind: str,
    target: ObjectPose,
    base: Pose2D,
    geometry: ArmGeometry,
    reference: Sequence[float],
    *,
    angle_rad: float = POUR_ANGLE_RAD,
    above_m: Sequence[float] = ABOVE_RIM_M,
) -> list[PourPath]:
    """The pours of the held `held_kind` into `target`, one per height above its rim
    and side the arm can tip toward, lowest first, in SIDES' order; CowpError naming
    the target's distance and each side's reason when there is none."""
    paths: list[PourPath] = []
    reasons: list[str] = []
    for height in above_m:
        found, why = _pours_at(
            held_kind, target_kind, target, base, geometry, reference, angle_rad, height
        )
        paths.extend(found)
        reasons.extend(f"{height * 100:.0f} cm above, {w}" for w in why)
    if paths:
        return paths
    c, s = math.cos(base.yaw), math.sin(base.yaw)
    dx, dy = target.x - base.x, target.y - base.y
    local = np.array([c * dx + s * dy, -s * dx + c * dy, target.z]) - np.array(geometry.mount)
    raise CowpError(
        f"the arm cannot pour over the {target_kind}: it stands "
        f"{math.hypot(local[0], local[1]):.2f} m out and {local[2]:+.2f} m up from the arm's "
        f"base ({'; '.join(reasons)})"
    )


def _pours_at(
    held_kind: str,
    target_kind: str,
    target: ObjectPose,
    base: Pose2D,
    geometry: ArmGeometry,
    reference: Sequence[float],
    angle_rad: float,
    above_m: float,
) -> tuple[list[PourPath], list[str]]:
    """The pours with the mouth `above_m` over the rim, and why each other side fails."""
    held = shape_of(held_kind)
    mouth_above_grasp = held.height - held.grasp_point()[2]
    rim = target.z + shape_of(target_kind).height
    # the mouth over the target's centre, in the base's floor frame, then the arm's
    c, s = math.cos(base.yaw), math.sin(base.yaw)
    dx, dy = target.x - base.x, target.y - base.y
    mouth = np.array([c * dx + s * dy, -s * dx + c * dy, rim + above_m]) - np.array(geometry.mount)
    # upright, the mouth higher: the foot above the rim
    start = mouth + np.array([0.0, 0.0, max(0.0, held.height + FOOT_CLEARANCE_M - above_m)])
    mx, my, mz = (float(v) for v in mouth + np.array(geometry.mount))
    mouth_map = (base.x + c * mx - s * my, base.y + s * mx + c * my, mz)
    # upright: tool0 straight above the grasp point, which is below the mouth
    current = kinematics.forward(reference)
    yaw = math.atan2(current[1, 0], current[0, 0])
    upright = kinematics.top_down(
        start[0], start[1], start[2] - mouth_above_grasp + geometry.tcp_from_tool0_m, yaw
    )
    paths: list[PourPath] = []
    reasons: list[str] = []
    for side, (sx, sy) in SIDES:
        solved = _tipped(
            upright, start, mouth[2], held.height, np.array([sx, sy, 0.0]), reference, angle_rad
        )
        if isinstance(solved, str):
            reasons.append(f"{side}: {solved}")
            continue
        paths.append(PourPath(solved[0], solved[1], side, mouth_map))
    return paths, reasons


def _tipped(
    upright: np.ndarray,
    start: np.ndarray,
    pour_z: float,
    length: float,
    toward: np.ndarray,
    reference: Sequence[float],
    angle_rad: float,
) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]] | str:
    """Joint positions upright (mouth at `start`) and at each tipping step toward
    `toward`, the mouth coming down to `pour_z` as far as the foot (`length` below the
    mouth) stays FOOT_CLEARANCE_M above where it started over the rim; or why not."""
    first = kinematics.inverse(upright, reference)
    if not first:
        return "not reachable upright"
    axis = np.cross(np.array([0.0, 0.0, 1.0]), toward)  # tips the mouth toward `toward`
    offset = upright[:3, 3] - start  # tool0 from the mouth, upright
    tips: list[tuple[float, ...]] = []
    previous = first[0].positions
    for k in range(1, POUR_STEPS + 1):
        angle = angle_rad * k / POUR_STEPS
        turn = rotation(axis, angle)
        # the foot is length * cos(angle) below the mouth: it must not come lower
        mouth = start.copy()
        mouth[2] = max(pour_z, start[2] - length * (1 - math.cos(angle)))
        pose = np.eye(4)
        pose[:3, :3] = turn @ upright[:3, :3]
        pose[:3, 3] = mouth + turn @ offset
        solutions = kinematics.inverse(pose, previous)
        degrees = math.degrees(angle)
        if not solutions:
            return f"no solution at {degrees:.0f} degrees"
        if solutions[0].distance > MAX_STEP_JUMP_RAD:
            return f"the wrist would turn over at {degrees:.0f} degrees"
        previous = solutions[0].positions
        tips.append(previous)
    return first[0].positions, tuple(tips)
