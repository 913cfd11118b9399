"""Where an object really stands, from the detector's boxes on one wrist colour image.

A wrist camera without depth still sees where an object is: the detector's box around
it, with the camera's intrinsics and its pose in the map (TF on the robot), is a ray
from the camera through the box's centre. Where the surface's height is known, the ray
meets the object's middle (half its kind's height above the surface): that is where it
stands. Looked at from above, a box's centre lies between the projections of the top's
centre and the foot's, so the middle is the height it is closest to (about a centimetre
off for a cup seen 15 degrees off the camera's axis, a quarter of the Hand-E's margin).

That first guess is then corrected against the object's own shape: the box its
outline (cowp_ros/skills/object_shapes.py) would make, standing at the guess, is
computed, and the guess moves by the difference between where the two boxes' centres
put it, until they agree. A tall bottle seen from the side of the view, whose box
centre leans toward its top, then stands where it is within a few millimetres.

Only boxes of the object's detector classes count, and of those only the one whose
point is nearest the expected position, within the object's size plus a margin: a
neighbour of another kind is never taken for the object, and nor is one of the same
kind standing further off than the margin. Pure numpy, tested without a camera.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from cowp_ros.skills.interfaces import ObjectPose
from cowp_ros.skills.object_shapes import Form, shape_of

# A ray that meets the plane this close to parallel (cosine with the vertical) is not
# used: the point would move metres for a pixel.
MIN_RAY_DOWN = 0.2
# The correction against the outline's box: at most this many rounds, and done when a
# round moves the guess less than this.
FIT_ROUNDS = 6
FIT_DONE_M = 0.0005
OUTLINE_SAMPLES = 16


@dataclass(frozen=True)
class Box:
    """One detection, in pixels of the colour image (top-left origin)."""

    class_name: str
    confidence: float
    x_min: float
    y_min: float
    x_max: float
    y_max: float


@dataclass(frozen=True)
class BoxView:
    """The detections of one colour image and where the camera was when it was taken
    (ROS optical convention: x right, y down, z along the view)."""

    boxes: Sequence[Box]
    fx: float
    fy: float
    cx: float
    cy: float
    camera_to_map: np.ndarray  # 4 x 4: the optical frame in the map

    def ground_point(self, u: float, v: float, height: float) -> np.ndarray | None:
        """The map point where the ray through pixel (u, v) meets the plane z = height,
        or None when the ray does not go down to it (it looks above the horizon, or
        nearly along the plane)."""
        direction = np.array([(u - self.cx) / self.fx, (v - self.cy) / self.fy, 1.0])
        direction /= np.linalg.norm(direction)
        rotation, origin = self.camera_to_map[:3, :3], self.camera_to_map[:3, 3]
        ray = rotation @ direction
        if -ray[2] < MIN_RAY_DOWN or origin[2] <= height:
            return None
        return origin + ray * ((origin[2] - height) / -ray[2])


def locate_from_boxes(
    view: BoxView,
    kind: str,
    classes: Collection[str],
    expected: ObjectPose,
    surface_height: float,
    *,
    min_confidence: float = 0.25,
    margin_m: float = 0.07,
) -> ObjectPose | None:
    """The object's pose from the boxes of `classes` (the detector's names for `kind`),
    or None when no such box puts it within its size plus `margin_m` of where it is
    expected. The heading stays the expected one: a box does not say it."""
    shape = shape_of(kind)
    reach = max(shape.radius, shape.length / 2) + margin_m
    middle = surface_height + shape.height / 2
    wanted = {c.strip().lower() for c in classes}
    best: tuple[float, np.ndarray, Box] | None = None
    for box in view.boxes:
        if box.class_name.strip().lower() not in wanted or box.confidence < min_confidence:
            continue
        u, v = (box.x_min + box.x_max) / 2, (box.y_min + box.y_max) / 2
        point = view.ground_point(u, v, middle)
        if point is None:
            continue
        off = math.hypot(float(point[0]) - expected.x, float(point[1]) - expected.y)
        if off <= reach and (best is None or off < best[0]):
            best = (off, point, box)
    if best is None:
        return None
    found = ObjectPose(float(best[1][0]), float(best[1][1]), surface_height, expected.yaw)
    return fit_outline(view, kind, found, best[2], middle)


def fit_outline(view: BoxView, kind: str, guess: ObjectPose, box: Box, middle: float) -> ObjectPose:
    """Move `guess` until the box of the kind's outline standing there has the centre
    `box` has (each round: the difference of the two centres' points on the plane)."""
    seen = view.ground_point((box.x_min + box.x_max) / 2, (box.y_min + box.y_max) / 2, middle)
    if seen is None:
        return guess
    x, y = guess.x, guess.y
    for _ in range(FIT_ROUNDS):
        corners = [project(view, p) for p in outline(kind, ObjectPose(x, y, guess.z, guess.yaw))]
        if any(c is None for c in corners):
            break
        us = [c[0] for c in corners if c is not None]
        vs = [c[1] for c in corners if c is not None]
        predicted = view.ground_point((min(us) + max(us)) / 2, (min(vs) + max(vs)) / 2, middle)
        if predicted is None:
            break
        dx, dy = float(seen[0] - predicted[0]), float(seen[1] - predicted[1])
        x, y = x + dx, y + dy
        if math.hypot(dx, dy) < FIT_DONE_M:
            break
    return ObjectPose(x, y, guess.z, guess.yaw)


def outline(kind: str, pose: ObjectPose) -> list[tuple[float, float, float]]:
    """Map points on the edges of the kind's shape standing at `pose`: the rims of a
    round object's foot and top, the corners of a bar or a block."""
    shape = shape_of(kind)
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    local: list[tuple[float, float]]
    if shape.form in (Form.CYLINDER, Form.DISH):
        local = [
            (shape.radius * math.cos(a), shape.radius * math.sin(a))
            for a in np.linspace(0, 2 * math.pi, OUTLINE_SAMPLES, endpoint=False)
        ]
    else:
        half_x = shape.length / 2 if shape.form is Form.BAR else shape.radius
        half_y = shape.radius
        local = [(sx * half_x, sy * half_y) for sx in (-1, 1) for sy in (-1, 1)]
    return [
        (pose.x + c * lx - s * ly, pose.y + s * lx + c * ly, pose.z + z)
        for lx, ly in local
        for z in (0.0, shape.height)
    ]


def project(view: BoxView, point: Sequence[float]) -> tuple[float, float] | None:
    """The pixel a map point shows at, or None when it is behind the camera (the inverse
    of ground_point, for tests and a simulated detector)."""
    inverse = np.linalg.inv(view.camera_to_map)
    x, y, z = (inverse @ np.array([*point, 1.0]))[:3]
    if z <= 0:
        return None
    return (float(view.fx * x / z + view.cx), float(view.fy * y / z + view.cy))
