"""A pour computed by inverse kinematics: checked by forward kinematics, the mouth
stays over the target while the container tips past level, its foot never comes down
onto the rim, and a target out of reach is refused with its distance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.skills import kinematics
from cowp_ros.skills.grasping import ArmGeometry
from cowp_ros.skills.interfaces import ObjectPose, Pose2D
from cowp_ros.skills.object_shapes import shape_of
from cowp_ros.skills.pouring import FOOT_CLEARANCE_M, POUR_ANGLE_RAD, pour_paths

GEOMETRY = ArmGeometry((0.1, 0.0, 0.8), 0.1325)
PRE_GRASP = (0.0, -1.0, 1.3, -1.87, -1.5708, 0.0)
BASE = Pose2D(2.0, 0.5, 0.3)


def in_map(q, point_in_tool0) -> np.ndarray:
    """A point given in tool0's frame, in the map, the arm at `q` on BASE."""
    tool0 = kinematics.forward(q)
    local = tool0[:3, :3] @ np.asarray(point_in_tool0) + tool0[:3, 3] + np.array(GEOMETRY.mount)
    c, s = math.cos(BASE.yaw), math.sin(BASE.yaw)
    return np.array(
        [BASE.x + c * local[0] - s * local[1], BASE.y + s * local[0] + c * local[1], local[2]]
    )


@pytest.mark.parametrize("ahead,left", [(0.75, 0.1), (0.8, -0.15), (0.65, 0.3)])
def test_the_mouth_stays_over_the_glass_and_the_bottle_tips_past_level(ahead, left) -> None:
    c, s = math.cos(BASE.yaw), math.sin(BASE.yaw)
    glass = ObjectPose(BASE.x + c * ahead - s * left, BASE.y + s * ahead + c * left, 0.75, 0.0)
    paths = pour_paths("bottle", "glass", glass, BASE, GEOMETRY, PRE_GRASP)
    assert paths
    path = paths[0]
    bottle, rim = shape_of("bottle"), 0.75 + shape_of("glass").height
    # the bottle hangs from the grasp point, tcp_from_tool0_m along tool0's z
    grasp_below = bottle.height - bottle.grasp_point()[2]
    mouth_in_tool = (0.0, 0.0, GEOMETRY.tcp_from_tool0_m - grasp_below)
    foot_in_tool = (0.0, 0.0, GEOMETRY.tcp_from_tool0_m + bottle.grasp_point()[2])
    for q in (path.above, *path.tips):
        assert all(lo <= v <= hi for v, (lo, hi) in zip(q, kinematics.POSITION_LIMITS, strict=True))
        mouth, foot = in_map(q, mouth_in_tool), in_map(q, foot_in_tool)
        assert math.hypot(mouth[0] - glass.x, mouth[1] - glass.y) < 1e-3
        assert mouth[2] > rim
        assert foot[2] >= rim + FOOT_CLEARANCE_M - 1e-3 or (
            math.hypot(foot[0] - glass.x, foot[1] - glass.y) > 0.04
        )
    # the last step: the bottle's axis (tool0's z, pointing to the foot) past level
    last = kinematics.forward(path.tips[-1])
    tipped = math.acos(float(np.clip(-last[2, 2], -1.0, 1.0)))
    assert tipped == pytest.approx(POUR_ANGLE_RAD, abs=1e-3)
    # consecutive steps are on one branch of the arm: the controller follows the turn
    for a, b in zip((path.above, *path.tips), path.tips, strict=False):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 0.7


def test_a_target_out_of_reach_is_refused_with_its_distance() -> None:
    far = ObjectPose(
        BASE.x + 1.6 * math.cos(BASE.yaw), BASE.y + 1.6 * math.sin(BASE.yaw), 0.75, 0.0
    )
    with pytest.raises(CowpError) as raised:
        pour_paths("bottle", "glass", far, BASE, GEOMETRY, PRE_GRASP)
    assert "cannot pour over the glass" in str(raised.value)
    assert "1.50 m out" in str(raised.value)
