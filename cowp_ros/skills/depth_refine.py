"""Where an object really stands, from one wrist depth image near where it was expected.

The calibrated location says where an object should be; a real kitchen moves it by a
few centimetres, which is the Hand-E's whole margin. From a depth image (ROS optical
convention: x right, y down, z along the view, metres), the camera's intrinsics and
its pose in the map (TF on the robot), the pixels are lifted to points in the map; the
points standing above the known surface height near the expected position are the
object's (returns within MIN_RANGE_M of the camera are the hand's own fingers). Its
position is the centre of its top (the top of a cup or the rim of a dish is seen whole
from above, its sides only in part); a long object's heading is its points' main axis.
Of what stands there, only the one thing nearest the expected position counts, and only
when it is as tall as the object's kind: a neighbour is never taken for the object.
Pure numpy, so the rule is tested without a camera.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cowp_ros.skills.interfaces import ObjectPose
from cowp_ros.skills.object_shapes import Form, shape_of

# A point belongs to an object when it stands this far above the surface.
ABOVE_SURFACE_M = 0.006
# The top: the points within this of the highest one.
TOP_BAND_M = 0.012
MIN_POINTS = 12
# Returns nearer the camera than this are the robot's own fingers.
MIN_RANGE_M = 0.16
# Points within this of each other (in the plane) belong to one thing.
CLUSTER_CELL_M = 0.01
# The thing seen must stand as tall as the object's kind, within this.
HEIGHT_SLACK_M = 0.02


@dataclass(frozen=True)
class DepthView:
    """One depth image and where the camera was when it was taken."""

    depth: np.ndarray  # H x W, metres along the optical axis; 0 or nan: no return
    fx: float
    fy: float
    cx: float
    cy: float
    camera_to_map: np.ndarray  # 4 x 4: the optical frame in the map

    @staticmethod
    def pinhole(depth: np.ndarray, fovy_rad: float, camera_to_map: np.ndarray) -> DepthView:
        """Square pixels, the vertical field of view given, the centre in the middle."""
        height, width = depth.shape
        f = (height / 2) / math.tan(fovy_rad / 2)
        return DepthView(depth, f, f, (width - 1) / 2, (height - 1) / 2, camera_to_map)

    def points(self, min_range_m: float = 0.0) -> np.ndarray:
        """Every pixel with a return beyond `min_range_m`, as an N x 3 array of map points."""
        rows, cols = np.nonzero(np.isfinite(self.depth) & (self.depth > min_range_m))
        z = self.depth[rows, cols]
        x = (cols - self.cx) / self.fx * z
        y = (rows - self.cy) / self.fy * z
        local = np.stack([x, y, z, np.ones_like(z)])
        return (self.camera_to_map @ local)[:3].T


def locate(
    view: DepthView,
    kind: str,
    expected: ObjectPose,
    surface_height: float,
    margin_m: float = 0.07,
) -> ObjectPose | None:
    """The object's pose from the view, or None when too few of its points are seen
    (it is not there, or the camera looked elsewhere). Points are taken within the
    object's own size plus `margin_m` of where it is expected, then again around where
    they put it, so an object moved by up to about `margin_m` is seen whole."""
    shape = shape_of(kind)
    reach = max(shape.radius, shape.length / 2) + margin_m
    points = view.points(MIN_RANGE_M)
    points = points[points[:, 2] > surface_height + ABOVE_SURFACE_M]
    points = points[np.hypot(points[:, 0] - expected.x, points[:, 1] - expected.y) <= 2 * reach]
    points = nearest_cluster(points, expected.x, expected.y)
    if len(points) < MIN_POINTS:
        return None
    # A thing of another height is another object (a plate's rim beside a fork).
    tallest = float(points[:, 2].max()) - surface_height
    if abs(tallest - shape.height) > HEIGHT_SLACK_M:
        return None
    x, y = expected.x, expected.y
    top = points[:0]
    for _ in range(3):  # re-centred on what was found
        mine = points[np.hypot(points[:, 0] - x, points[:, 1] - y) <= reach]
        if len(mine) < MIN_POINTS:
            return None
        top = mine[mine[:, 2] >= mine[:, 2].max() - TOP_BAND_M]
        x, y = (float(v) for v in top[:, :2].mean(axis=0))
    yaw = expected.yaw
    if shape.form is Form.BAR and len(top) >= MIN_POINTS:
        centred = top[:, :2] - top[:, :2].mean(axis=0)
        _, vectors = np.linalg.eigh(centred.T @ centred)
        axis = vectors[:, -1]  # the main axis: the largest spread
        found = math.atan2(float(axis[1]), float(axis[0]))
        # of the two headings along the axis, the one nearer the expected
        if math.cos(found - expected.yaw) < 0:
            found += math.pi
        yaw = math.atan2(math.sin(found), math.cos(found))
    return ObjectPose(x, y, surface_height, yaw)


def nearest_cluster(points: np.ndarray, x: float, y: float) -> np.ndarray:
    """The points of the one thing (cells of CLUSTER_CELL_M touching each other in the
    plane) nearest to (x, y): a neighbour is not mistaken for part of the object."""
    if len(points) == 0:
        return points
    cells = np.floor(points[:, :2] / CLUSTER_CELL_M).astype(np.int64)
    members: dict[tuple[int, int], list[int]] = {}
    for index, (i, j) in enumerate(cells):
        members.setdefault((int(i), int(j)), []).append(index)
    nearest = int(np.argmin(np.hypot(points[:, 0] - x, points[:, 1] - y)))
    start = (int(cells[nearest][0]), int(cells[nearest][1]))
    seen, frontier = {start}, [start]
    while frontier:
        i, j = frontier.pop()
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                cell = (i + di, j + dj)
                if cell in members and cell not in seen:
                    seen.add(cell)
                    frontier.append(cell)
    chosen = [index for cell in seen for index in members[cell]]
    return points[np.array(sorted(chosen))]
