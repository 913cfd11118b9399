"""Where the detector's box on a colour image puts an object, with no depth: the ray
through the box's centre to the object's middle above the surface, corrected against the
box the object's own outline makes. Boxes are made by projecting the outline of an
object standing at a known pose, so the answer is known to the millimetre."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cowp_ros.skills.box_refine import Box, BoxView, locate_from_boxes, outline, project
from cowp_ros.skills.interfaces import ObjectPose

SURFACE = 0.75


def camera_above(x: float, y: float, height: float, tilt_rad: float = 0.0) -> np.ndarray:
    """An optical frame `height` above (x, y), looking down, leaning `tilt_rad` about
    its x axis (the view off the vertical, as when the arm's look pose is not straight)."""
    down = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])
    c, s = math.cos(tilt_rad), math.sin(tilt_rad)
    lean = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    pose = np.eye(4)
    pose[:3, :3] = down @ lean
    pose[:3, 3] = (x, y, height)
    return pose


def view_of(objects: list[tuple[str, str, ObjectPose]], camera: np.ndarray) -> BoxView:
    view = BoxView([], 300.0, 300.0, 160.0, 120.0, camera)
    boxes = []
    for class_name, kind, pose in objects:
        pixels = [project(view, p) for p in outline(kind, pose)]
        us = [p[0] for p in pixels if p is not None]
        vs = [p[1] for p in pixels if p is not None]
        boxes.append(Box(class_name, 0.8, min(us), min(vs), max(us), max(vs)))
    return BoxView(boxes, 300.0, 300.0, 160.0, 120.0, camera)


@pytest.mark.parametrize("kind", ["cup", "bottle", "bowl", "fork"])
@pytest.mark.parametrize("tilt", [0.0, 0.35])
def test_an_object_moved_from_where_expected_is_found_within_two_millimetres(kind, tilt):
    truth = ObjectPose(2.84, 0.61, SURFACE, 0.3)
    expected = ObjectPose(2.80, 0.65, SURFACE, 0.3)
    view = view_of([(kind, kind, truth)], camera_above(2.8, 0.65, SURFACE + 0.45, tilt))
    found = locate_from_boxes(view, kind, [kind], expected, SURFACE)
    assert found is not None
    assert math.hypot(found.x - truth.x, found.y - truth.y) < 0.002
    assert found.yaw == expected.yaw  # a box says nothing of heading


def test_the_outline_correction_is_what_makes_it_exact():
    """Without the correction, the box centre of a tall bottle seen off-axis leans
    toward its top: centimetres, where the Hand-E has five millimetres to spare."""
    truth = ObjectPose(2.9, 0.5, SURFACE, 0.0)
    view = view_of([("bottle", "bottle", truth)], camera_above(2.75, 0.6, SURFACE + 0.4, 0.3))
    box = view.boxes[0]
    naive = view.ground_point(
        (box.x_min + box.x_max) / 2, (box.y_min + box.y_max) / 2, SURFACE + 0.08
    )
    assert naive is not None
    assert math.hypot(naive[0] - truth.x, naive[1] - truth.y) > 0.005
    found = locate_from_boxes(
        view, "bottle", ["bottle"], ObjectPose(2.88, 0.52, SURFACE, 0.0), SURFACE
    )
    assert found is not None and math.hypot(found.x - truth.x, found.y - truth.y) < 0.002


def test_only_the_objects_own_classes_count_and_the_nearest_of_them():
    cup = ObjectPose(2.80, 0.60, SURFACE, 0.0)
    other_cup = ObjectPose(2.80, 0.78, SURFACE, 0.0)
    bowl = ObjectPose(2.82, 0.58, SURFACE, 0.0)
    camera = camera_above(2.8, 0.65, SURFACE + 0.45)
    view = view_of([("bowl", "bowl", bowl), ("cup", "cup", other_cup), ("cup", "cup", cup)], camera)
    expected = ObjectPose(2.81, 0.62, SURFACE, 0.0)
    found = locate_from_boxes(view, "cup", ["cup"], expected, SURFACE)
    assert found is not None and math.hypot(found.x - cup.x, found.y - cup.y) < 0.002
    # the detector's name for the kind is what is matched (a mug reported as "cup")
    assert locate_from_boxes(view, "mug", ["cup"], expected, SURFACE) is not None
    assert locate_from_boxes(view, "mug", ["mug"], expected, SURFACE) is None


def test_nothing_near_enough_or_confident_enough_is_not_found():
    camera = camera_above(2.8, 0.65, SURFACE + 0.45)
    far = view_of([("cup", "cup", ObjectPose(2.8, 0.85, SURFACE, 0.0))], camera)
    expected = ObjectPose(2.8, 0.62, SURFACE, 0.0)
    assert locate_from_boxes(far, "cup", ["cup"], expected, SURFACE) is None
    near = view_of([("cup", "cup", ObjectPose(2.8, 0.63, SURFACE, 0.0))], camera)
    faint = BoxView(
        [Box("cup", 0.1, b.x_min, b.y_min, b.x_max, b.y_max) for b in near.boxes],
        near.fx,
        near.fy,
        near.cx,
        near.cy,
        near.camera_to_map,
    )
    assert locate_from_boxes(faint, "cup", ["cup"], expected, SURFACE) is None
    assert locate_from_boxes(near, "cup", ["cup"], expected, SURFACE) is not None


def test_a_ray_that_does_not_come_down_to_the_surface_gives_no_point():
    level = np.eye(4)
    level[:3, :3] = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # looks ahead
    level[:3, 3] = (2.5, 0.5, SURFACE + 0.3)
    view = BoxView([], 300.0, 300.0, 160.0, 120.0, level)
    assert view.ground_point(160.0, 120.0, SURFACE) is None  # along the horizon
    assert view.ground_point(160.0, 0.0, SURFACE) is None  # above it
