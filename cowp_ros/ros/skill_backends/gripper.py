"""Robotiq Hand-E backends: a position command topic, or control_msgs/GripperCommand.

Whether a grasp worked is read from where the fingers stopped, the one signal every
Hand-E setup has: stopped above robot.yaml's grasp_threshold_m means something is
between them; closed to (nearly) zero means the gripper missed. A stop is "moved
less than the position tolerance during settle_time_s".
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from cowp_ros.ros.skill_backends.arm import control_msgs_client
from cowp_ros.ros.skill_backends.common import (
    JointStateCache,
    Timeouts,
    WaitEnd,
    run_action,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.skills.config import GripperConfig
from cowp_ros.skills.interfaces import Outcome, Status


def mm(metres: float) -> str:
    return f"{metres * 1000:.1f} mm"


class _GripperBase:
    def __init__(self, config: GripperConfig, timeouts: Timeouts, joints: JointStateCache) -> None:
        self.config = config
        self.timeouts = timeouts
        self.joints = joints
        self.finger = (config.finger_joint,)

    def position(self) -> float | None:
        positions = self.joints.positions(self.finger)
        return None if positions is None else positions[0]

    def _silent(self) -> Outcome:
        return Outcome.failure(
            silent_message(
                self.joints.topic,
                f"sensor_msgs/JointState with {self.config.finger_joint}",
                self.timeouts.topic_s,
            )
        )

    def _verdict(self, target: float, expect_object: bool) -> Outcome:
        """Judge a finished command from where the finger is now."""
        position = self.position()
        if position is None:
            return self._silent()
        cfg = self.config
        if target == cfg.open_position_m:
            if abs(position - target) <= max(cfg.position_tolerance_m, 0.002):
                return Outcome.success(f"gripper open ({mm(position)})")
            return Outcome.failure(f"gripper stopped at {mm(position)} while opening (blocked?)")
        if not expect_object:
            return Outcome.success(f"gripper closed ({mm(position)})")
        if position > cfg.grasp_threshold_m:
            return Outcome.success(f"holding an object (fingers stopped at {mm(position)})")
        return Outcome.failure(
            f"grasp failed: fingers closed to {mm(position)} (at or below "
            f"{mm(cfg.grasp_threshold_m)}), nothing between them"
        )


class TopicGripper(_GripperBase):
    """Float64MultiArray [position] on the command topic; fingers watched on joint states."""

    def __init__(
        self, node: Node, config: GripperConfig, timeouts: Timeouts, joints: JointStateCache
    ) -> None:
        super().__init__(config, timeouts, joints)
        self.description = f"topic gripper ({config.command_topic})"
        self.publisher = node.create_publisher(Float64MultiArray, config.command_topic, 10)

    def open(self, cancel: threading.Event) -> Outcome:
        return self._command(self.config.open_position_m, cancel, expect_object=False)

    def close(self, cancel: threading.Event, *, expect_object: bool) -> Outcome:
        return self._command(self.config.closed_position_m, cancel, expect_object=expect_object)

    def _command(self, target: float, cancel: threading.Event, *, expect_object: bool) -> Outcome:
        cfg = self.config
        end = wait_for_subscriber(
            self.publisher.get_subscription_count, cancel=cancel, timeout_s=self.timeouts.server_s
        )
        if end is WaitEnd.CANCELED:
            return Outcome.canceled("canceled before the gripper moved")
        if end is not WaitEnd.DONE:
            return Outcome.failure(
                f"nothing subscribes to {cfg.command_topic} within {self.timeouts.server_s:g} s "
                "(is the gripper controller running?)"
            )
        end, _ = self.joints.wait_for(self.finger, cancel=cancel, timeout_s=self.timeouts.topic_s)
        if end is WaitEnd.CANCELED:
            return Outcome.canceled("canceled before the gripper moved")
        if end is not WaitEnd.DONE:
            return self._silent()
        self.publisher.publish(Float64MultiArray(data=[float(target)]))
        commanded = time.monotonic()
        history: deque[tuple[float, float]] = deque()

        def settled() -> bool:
            position = self.position()
            if position is None:
                return False
            now = time.monotonic()
            history.append((now, position))
            if abs(position - target) <= cfg.position_tolerance_m:
                return True
            while history and history[0][0] < now - cfg.settle_time_s:
                history.popleft()
            if now - commanded < cfg.settle_time_s:
                return False
            values = [p for _, p in history]
            return max(values) - min(values) <= cfg.position_tolerance_m

        end = wait_until(
            settled,
            cancel=cancel,
            deadline=commanded + self.timeouts.gripper_s,
            signal=self.joints.signal,
            silence_s=self.timeouts.topic_s,
            heard=lambda: self.joints.last_heard(self.finger),
        )
        if end is WaitEnd.DONE:
            return self._verdict(target, expect_object)
        if end is WaitEnd.SILENT:
            return self._silent()
        position = self.position()
        if position is not None:  # hold where the fingers are
            self.publisher.publish(Float64MultiArray(data=[position]))
        if end is WaitEnd.CANCELED:
            return Outcome.canceled("gripper command canceled; fingers holding position")
        return Outcome.failure(
            f"gripper did not settle within {self.timeouts.gripper_s:g} s "
            f"(fingers at {mm(position) if position is not None else 'unknown'})"
        )


class ActionGripper(_GripperBase):
    """control_msgs/GripperCommand; grasp success from the finger position.

    Robotiq's gripper action controller aborts a goal that stalls on an object unless
    its allow_stalling parameter is true; a stalled result is treated as "stopped", and
    the finger position decides success either way.
    """

    def __init__(
        self,
        node: Node,
        config: GripperConfig,
        timeouts: Timeouts,
        joints: JointStateCache,
        callback_group: CallbackGroup | None = None,
        *,
        action_type: Any | None = None,
        client: Any | None = None,
    ) -> None:
        super().__init__(config, timeouts, joints)
        self.action_type, self.client = control_msgs_client(
            node,
            "GripperCommand",
            config.gripper_command_action,
            callback_group,
            action_type,
            client,
        )
        self.description = f"GripperCommand gripper ({config.gripper_command_action})"

    def open(self, cancel: threading.Event) -> Outcome:
        return self._command(self.config.open_position_m, cancel, expect_object=False)

    def close(self, cancel: threading.Event, *, expect_object: bool) -> Outcome:
        return self._command(self.config.closed_position_m, cancel, expect_object=expect_object)

    def _command(self, target: float, cancel: threading.Event, *, expect_object: bool) -> Outcome:
        goal = self.action_type.Goal()
        goal.command.position = float(target)
        goal.command.max_effort = float(self.config.max_effort_n)
        outcome, result = run_action(
            self.client,
            goal,
            server=self.config.gripper_command_action,
            kind="GripperCommand",
            cancel=cancel,
            server_s=self.timeouts.server_s,
            motion_s=self.timeouts.gripper_s,
        )
        # An abort with a result that says "stalled" is the fingers stopping on something.
        stalled_abort = (
            outcome.status is Status.FAILED
            and result is not None
            and bool(getattr(result, "stalled", False))
        )
        if not outcome.ok and not stalled_abort:
            return outcome
        # Prefer the joint state (the contract); fall back to the result's position.
        end, _ = self.joints.wait_for(self.finger, cancel=cancel, timeout_s=0.5)
        if end is WaitEnd.CANCELED:
            return Outcome.canceled("canceled while reading the finger position")
        if self.position() is None:
            if result is None:
                return self._silent()
            return self._verdict_at(float(result.position), target, expect_object)
        return self._verdict(target, expect_object)

    def _verdict_at(self, position: float, target: float, expect_object: bool) -> Outcome:
        """The verdict from the action result's position, when no joint state is heard."""
        cfg = self.config
        if target == cfg.open_position_m:
            return Outcome.success(f"gripper open ({mm(position)})")
        if not expect_object or position > cfg.grasp_threshold_m:
            return Outcome.success(f"gripper closed at {mm(position)}")
        return Outcome.failure(f"grasp failed: fingers closed to {mm(position)}, nothing held")
