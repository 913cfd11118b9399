"""What a gripper command or a grasp check came to, judged from where the fingers rest.

Pure logic over robot.yaml's gripper figures, so every gripper backend (the topic and
action backends on ROS, the in-process physics one) says the same thing in the same
words: open within the tolerance, closed on something above the grasp threshold,
closed on nothing at or below it, open when an object should be held.
"""

from __future__ import annotations

from cowp_ros.skills.config import GripperConfig
from cowp_ros.skills.interfaces import MotionResult


def mm(metres: float) -> str:
    return f"{metres * 1000:.1f} mm"


def mm_or_unknown(metres: float | None) -> str:
    """A finger position in millimetres, or "unknown" where none was heard."""
    return "unknown" if metres is None else mm(metres)


def command_verdict(
    position: float, target: float, config: GripperConfig, *, expect_object: bool
) -> MotionResult:
    """A finished open (`target` the open position) or close, from where the finger is."""
    if target == config.open_position_m:
        if abs(position - target) <= max(config.position_tolerance_m, 0.002):
            return MotionResult.success(f"gripper open ({mm(position)})")
        return MotionResult.failure(f"gripper stopped at {mm(position)} while opening (blocked?)")
    if not expect_object:
        return MotionResult.success(f"gripper closed ({mm(position)})")
    if position > config.grasp_threshold_m:
        return MotionResult.success(f"holding an object (fingers stopped at {mm(position)})")
    return MotionResult.failure(
        f"grasp failed: fingers closed to {mm(position)} (at or below "
        f"{mm(config.grasp_threshold_m)}), nothing between them"
    )


def holding_verdict(position: float, config: GripperConfig) -> MotionResult:
    """Whether the fingers still rest on an object: a grasp that slipped closes them."""
    open_at = config.open_position_m - max(config.position_tolerance_m, 0.002)
    if position >= open_at:
        return MotionResult.failure(f"nothing is held: the fingers are open ({mm(position)})")
    if position > config.grasp_threshold_m:
        return MotionResult.success(f"still holding (fingers at {mm(position)})")
    return MotionResult.failure(
        f"the object slipped out of the fingers (closed to {mm(position)}, at or below "
        f"{mm(config.grasp_threshold_m)})"
    )
