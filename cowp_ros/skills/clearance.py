"""Is a computed arm motion clear of the known furniture? Checked before it is sent.

A grasp computed from where an object stands is a motion nobody taught, so it is checked
the way MoveIt users expect of a pick: the arm as a chain of spheres along UR's DH
frames (the links' radii from ur_description's collision shapes, rounded up), the
Hand-E's body and pads below the flange, against the work surfaces as boxes (robot.yaml
`surfaces`: each location's counter or table, its height, how far ahead of the base
pose its front edge is, its depth and width). The path checked is the one the
trajectory controller follows for a one-point goal, a straight line in joint space,
sampled finely enough that no sphere jumps further than its radius between samples.
The held object is not modelled; the pads are allowed down to `PAD_MARGIN_M` above
a surface, since they close around objects standing on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cowp_ros.skills import kinematics
from cowp_ros.skills.config import SurfaceConfig
from cowp_ros.skills.interfaces import Pose2D
from cowp_ros.skills.object_shapes import PAD_HALF_LENGTH_M

LINK_MARGIN_M = 0.01
PAD_MARGIN_M = 0.001
# (from DH frame, to DH frame, radius m): upper arm, forearm, the three wrist links
LINKS = ((1, 2, 0.06), (2, 3, 0.05), (3, 4, 0.045), (4, 5, 0.045), (5, 6, 0.045))
HAND_RADIUS_M = 0.045  # the Hand-E's body, tool0 to the fingers' base
HAND_LENGTH_M = 0.10
PAD_RADIUS_M = 0.01
MAX_SAMPLE_STEP_RAD = 0.02
# Surfaces further from the base than this (plus their half width) are out of reach.
REACH_M = 1.6


@dataclass(frozen=True)
class Box:
    """A work surface: its top at `top`, from the floor up, `half_x` deep and `half_y`
    wide about its centre, turned by `yaw`."""

    name: str
    x: float
    y: float
    yaw: float
    half_x: float
    half_y: float
    top: float

    def clearance(self, point: np.ndarray) -> float:
        """How far `point` is from the box (negative inside)."""
        dx, dy = point[0] - self.x, point[1] - self.y
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        outside = np.array(
            [
                max(abs(lx) - self.half_x, 0.0),
                max(abs(ly) - self.half_y, 0.0),
                max(point[2] - self.top, 0.0, -point[2]),
            ]
        )
        if outside.any():
            return float(np.linalg.norm(outside))
        return -min(self.half_x - abs(lx), self.half_y - abs(ly), self.top - point[2])


def furniture(locations: dict[str, Pose2D], surfaces: SurfaceConfig) -> list[Box]:
    """The work surface of every location that has one."""
    boxes = []
    ahead = surfaces.front_m + surfaces.depth_m / 2
    for name, pose in locations.items():
        if surfaces.on_floor(name):
            continue
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        boxes.append(
            Box(
                name,
                pose.x + c * ahead,
                pose.y + s * ahead,
                pose.yaw,
                surfaces.depth_m / 2,
                surfaces.width_m / 2,
                surfaces.height,
            )
        )
    return boxes


def _frames(q: Sequence[float]) -> list[np.ndarray]:
    """The DH frames 0..6 in base_link."""
    transform = kinematics.BASE_TO_DH.copy()
    frames = [transform]
    for i in range(6):
        transform = transform @ kinematics.dh(q[i], kinematics.D[i], kinematics.A[i],
                                              kinematics.ALPHA[i])  # fmt: skip
        frames.append(transform)
    return frames


def spheres(
    q: Sequence[float], base: Pose2D, mount: Sequence[float], tcp_from_tool0_m: float
) -> list[tuple[str, np.ndarray, float, float]]:
    """(part, centre in the map, radius, margin) for the arm at `q`, the base at `base`."""
    frames = _frames(q)
    local: list[tuple[str, np.ndarray, float, float]] = []
    for first, last, radius in LINKS:
        a, b = frames[first][:3, 3], frames[last][:3, 3]
        count = max(2, math.ceil(np.linalg.norm(b - a) / radius) + 1)
        for t in np.linspace(0.0, 1.0, count):
            local.append((f"link {first}-{last}", a + t * (b - a), radius, LINK_MARGIN_M))
    tool0 = frames[6]
    axis, origin = tool0[:3, 2], tool0[:3, 3]
    for t in np.linspace(0.0, HAND_LENGTH_M, 3):
        local.append(("the hand", origin + t * axis, HAND_RADIUS_M, LINK_MARGIN_M))
    pad_tip = origin + (tcp_from_tool0_m + PAD_HALF_LENGTH_M) * axis
    local.append(("the fingertips", pad_tip, 0.0, PAD_MARGIN_M))
    mx, my, mz = mount
    c, s = math.cos(base.yaw), math.sin(base.yaw)
    placed = []
    for part, p, radius, margin in local:
        x, y, z = p[0] + mx, p[1] + my, p[2] + mz
        placed.append(
            (part, np.array([base.x + c * x - s * y, base.y + s * x + c * y, z]), radius, margin)
        )
    return placed


def first_contact(
    start: Sequence[float],
    goal: Sequence[float],
    base: Pose2D,
    mount: Sequence[float],
    tcp_from_tool0_m: float,
    boxes: list[Box],
) -> str | None:
    """None when the joint-space path from `start` to `goal` keeps clear of `boxes`;
    else which part comes how close to which surface, and where along the move."""
    near = [b for b in boxes if math.hypot(b.x - base.x, b.y - base.y) < REACH_M + b.half_y]
    travel = max(abs(a - b) for a, b in zip(start, goal, strict=True))
    count = max(2, math.ceil(travel / MAX_SAMPLE_STEP_RAD) + 1)
    s0, s1 = np.asarray(start, dtype=float), np.asarray(goal, dtype=float)
    for t in np.linspace(0.0, 1.0, count):
        q = s0 + t * (s1 - s0)
        for part, centre, radius, margin in spheres(q, base, mount, tcp_from_tool0_m):
            for box in near:
                gap = box.clearance(centre) - radius
                if gap < margin:
                    return (
                        f"{part} would come within {max(gap, 0.0) * 100:.1f} cm of the "
                        f"{box.name}'s surface ({t * 100:.0f} % along the move)"
                    )
    return None
