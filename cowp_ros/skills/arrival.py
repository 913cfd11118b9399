"""Where the base stopped against where it was sent: the judgement and the correction.

Nav2's default goal checker accepts 0.25 m and 0.25 rad; robot.yaml's tolerance is five
times tighter, because at arm's reach 0.25 rad is 17 cm sideways. The executor reads the
base's pose after a drive and, outside the tolerance, drives the rest once on cmd_vel
(a holonomic base) with the command below. Kept free of ROS so the ROS arrival check
and the in-process bench drive the base by the same law.
"""

from __future__ import annotations

import math

from cowp_ros.skills.interfaces import Pose2D

# Slow and gentle: a world that runs faster than the wall clock must not overshoot.
MAX_SPEED_M_S = 0.1
MAX_TURN_RAD_S = 0.3
GAIN = 1.0
# The correction aims well inside the tolerance, so the arm works from a pose as near
# the calibrated one as the base can hold.
AIM_FRACTION = 0.2


def within(
    pose: Pose2D, goal: Pose2D, position_m: float, yaw_rad: float, fraction: float = 1.0
) -> bool:
    return pose.distance_to(goal) <= position_m * fraction and (
        pose.yaw_error_to(goal) <= yaw_rad * fraction
    )


def correction(pose: Pose2D, goal: Pose2D) -> tuple[float, float, float]:
    """The body-frame velocity (vx, vy, yaw rate) that brings `pose` toward `goal`."""
    dx, dy = goal.x - pose.x, goal.y - pose.y
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    vx, vy = (c * dx + s * dy) * GAIN, (-s * dx + c * dy) * GAIN
    scale = min(1.0, MAX_SPEED_M_S / max(math.hypot(vx, vy), 1e-9))
    turn = math.atan2(math.sin(goal.yaw - pose.yaw), math.cos(goal.yaw - pose.yaw))
    wz = max(-MAX_TURN_RAD_S, min(MAX_TURN_RAD_S, turn * GAIN))
    return vx * scale, vy * scale, wz
