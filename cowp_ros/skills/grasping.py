"""Top-down grasps computed from where an object is, relative to where the base stands.

A calibrated joint pose only works for the base pose and object spot it was taught at.
When the object's pose is known (an object frame on TF: a pose estimator, or the
physics world), the grasp is computed instead: the object's grasp point
(cowp_ros/skills/object_shapes.py) in the arm's base frame, the Hand-E pointing down
with its fingers closing across the object, solved by UR's closed-form inverse
kinematics, the solution nearest the calibrated pose taken (the same elbow and wrist
branch the teach pendant chose). `approach` and `lift` are the same pose raised by
`clearance_m`, so the hand comes down onto the object and goes straight up with it.
A sliding front's handle is taken the same way and `pull` draws it `pull_m` along the
front's own axis, toward the robot: the direction the front slides, whatever the angle
the base stopped at.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cowp_ros.errors import CowpError
from cowp_ros.skills import kinematics
from cowp_ros.skills.interfaces import ObjectPose, Pose2D
from cowp_ros.skills.object_shapes import Form, shape_of

STAGES = ("approach", "reach", "lift", "pull")
# The wrist camera's view: above the object's centre (not its grasp point: a dish is
# taken by its rim), `clearance_m` above its top.
LOOK = "look"
# An object leaning further than this from upright is not taken from above.
MAX_TILT_RAD = 0.35


@dataclass(frozen=True)
class ArmGeometry:
    """Where the arm's base sits on the mobile base, and the grasp point on the hand."""

    mount: tuple[float, float, float]  # ur_base_link in base_footprint, on the floor (m)
    tcp_from_tool0_m: float  # the grasp point between the pads, along tool0's z
    clearance_m: float = 0.12  # approach and lift height above the grasp
    pull_m: float = 0.15  # how far `pull` draws a front's handle toward the robot


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


def grasp_point(kind: str, obj: ObjectPose) -> tuple[np.ndarray, float]:
    """The map point the grasp point goes to, and the fingers' closing direction (yaw)."""
    shape = shape_of(kind)
    gx, gy, gz = shape.grasp_point()
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    point = np.array([obj.x + c * gx - s * gy, obj.y + s * gx + c * gy, obj.z + gz])
    closing = obj.yaw + shape.closing_yaw()
    if shape.form is Form.CYLINDER:
        closing = math.nan  # any direction closes across a round object
    return point, closing


def grasp_joints(
    kind: str,
    obj: ObjectPose,
    base: Pose2D,
    geometry: ArmGeometry,
    reference: Sequence[float],
    stage: str,
) -> tuple[float, ...]:
    """Joint positions for `stage` of a top-down grasp of `obj` with the base at `base`;
    CowpError when the arm cannot reach it (named with the distance in the arm's frame)."""
    if stage not in (*STAGES, LOOK):
        raise CowpError(f"unknown grasp stage '{stage}' (one of {', '.join(STAGES)})")
    if obj.tilt > MAX_TILT_RAD:
        raise CowpError(
            f"the {kind} is not upright (leaning {math.degrees(obj.tilt):.0f} degrees): a "
            "top-down grasp cannot take it"
        )
    point, closing = grasp_point(kind, obj)
    if stage == LOOK:
        point = np.array([obj.x, obj.y, obj.z + shape_of(kind).height + geometry.clearance_m])
        closing = math.nan
    elif stage == "pull":  # a front slides along its -x, toward whoever faces it
        point = point - geometry.pull_m * np.array([math.cos(obj.yaw), math.sin(obj.yaw), 0.0])
    elif stage != "reach":
        point = point + np.array([0.0, 0.0, geometry.clearance_m])
    # The point in the base's floor frame, then in the arm's base frame.
    c, s = math.cos(base.yaw), math.sin(base.yaw)
    dx, dy = point[0] - base.x, point[1] - base.y
    local = np.array([c * dx + s * dy, -s * dx + c * dy, point[2]])
    mx, my, mz = geometry.mount
    in_arm = local - np.array([mx, my, mz])
    # The tool's yaw at the reference pose: keep the wrist where it is when any closing
    # direction will do; otherwise the one of the two that turns the wrist least.
    current = kinematics.forward(reference)
    reference_yaw = math.atan2(current[1, 0], current[0, 0])
    if math.isnan(closing):
        yaws = [reference_yaw]
    else:
        closing_local = closing - base.yaw
        # tool0 x = (cos t, sin t), the fingers close along its y = (sin t, -cos t)
        first = _wrap(closing_local + math.pi / 2)
        # a square block closes across either pair of faces, never across its corners
        turns = 4 if shape_of(kind).form is Form.BLOCK else 2
        yaws = sorted(
            (_wrap(first + k * 2 * math.pi / turns) for k in range(turns)),
            key=lambda t: abs(_wrap(t - reference_yaw)),
        )
    for yaw in yaws:
        tool0 = kinematics.top_down(
            in_arm[0], in_arm[1], in_arm[2] + geometry.tcp_from_tool0_m, yaw
        )
        solutions = kinematics.inverse(tool0, reference)
        if solutions:
            return solutions[0].positions
    reach = math.hypot(in_arm[0], in_arm[1])
    raise CowpError(
        f"the arm cannot reach the {kind} for a top-down grasp ({stage}): it is "
        f"{reach:.2f} m out and {in_arm[2]:+.2f} m up from the arm's base"
    )
