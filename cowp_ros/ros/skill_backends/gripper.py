"""Robotiq Hand-E backends: a position command topic, or a gripper action controller.

Whether a grasp worked is read from where the fingers stopped, the one signal every
Hand-E setup has: stopped above robot.yaml's grasp_threshold_m means something is
between them; closed to (nearly) zero means the gripper missed. A stop is "heard
moving less than the position tolerance during settle_time_s" (skills/finger_rest.py:
a joint-state topic that goes quiet, or a command not yet acted on, is not a stop).

On Kilted the only gripper action controller in ros2_controllers is
parallel_gripper_action_controller (control_msgs/action/ParallelGripperCommand on
~/gripper_cmd); its `reached_goal` and `stalled` say how the goal ended, but not
whether anything is held: it reports reached_goal within goal_tolerance (10 mm by
default, almost half the Hand-E's stroke) and, with a hardware interface whose velocity
state stays 0 (the Hand-E driver's), "stalled" after stall_timeout while the fingers
still move. So the backend lets the fingers settle on /joint_states after the result
and judges the position, as for the topic backend. The older
control_msgs/action/GripperCommand stays available for drivers that still serve it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from cowp_ros.ros.skill_backends.arm import control_msgs_client
from cowp_ros.ros.skill_backends.common import (
    Deadline,
    JointStateCache,
    Timeouts,
    WaitEnd,
    motion_result,
    ready_to_send,
    run_action,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.skills.config import GripperConfig
from cowp_ros.skills.finger_rest import FingerRest, RestRule
from cowp_ros.skills.grip_verdict import command_verdict, holding_verdict, mm, mm_or_unknown
from cowp_ros.skills.interfaces import MotionResult, Status


class _GripperBase:
    def __init__(self, config: GripperConfig, timeouts: Timeouts, joints: JointStateCache) -> None:
        self.config = config
        self.timeouts = timeouts
        self.joints = joints
        self.finger = (config.finger_joint,)

    def position(self) -> float | None:
        positions = self.joints.positions(self.finger)
        return None if positions is None else positions[0]

    def holding(self, cancel: threading.Event) -> MotionResult:
        """Whether the fingers still rest on an object: a grasp that slipped closes them."""
        end, _ = self.joints.wait_for(self.finger, cancel=cancel, timeout_s=self.timeouts.topic_s)
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled("canceled while checking the grasp")
        position = self.position()
        if position is None:
            return self._silent()
        return holding_verdict(position, self.config)

    def _silent(self) -> MotionResult:
        return MotionResult.failure(
            silent_message(
                self.joints.topic,
                f"sensor_msgs/JointState with {self.config.finger_joint}",
                self.timeouts.topic_s,
            )
        )

    def _wait_settled(
        self,
        target: float,
        cancel: threading.Event,
        deadline: Deadline,
        *,
        response_s: float | None = None,
    ) -> WaitEnd:
        """Wait until the finger is at `target`, or was heard standing still for
        settle_time_s (stopped on an object or blocked); see skills/finger_rest.py.
        `response_s`: how long unmoved fingers are given to start (robot.yaml's
        response_time_s unless the controller has already reported on the command)."""
        cfg = self.config
        response = cfg.response_time_s if response_s is None else response_s
        rest = FingerRest(
            RestRule(cfg.position_tolerance_m, cfg.settle_time_s, response),
            target,
            started_at=time.monotonic(),
        )

        def settled() -> bool:
            sample = self.joints.sample(self.finger)
            if sample is None:
                return False
            (position,), heard = sample
            rest.heard(heard, position)
            return rest.at_rest()

        return wait_until(
            settled,
            cancel=cancel,
            deadline=deadline,
            signal=self.joints.signal,
            silence_s=self.timeouts.topic_s,
            heard=lambda: self.joints.last_heard(self.finger),
        )

    def _verdict(self, target: float, expect_object: bool) -> MotionResult:
        """Judge a finished command from where the finger is now."""
        position = self.position()
        if position is None:
            return self._silent()
        return command_verdict(position, target, self.config, expect_object=expect_object)


class TopicGripper(_GripperBase):
    """Float64MultiArray [position] on the command topic; fingers watched on joint states."""

    def __init__(
        self, node: Node, config: GripperConfig, timeouts: Timeouts, joints: JointStateCache
    ) -> None:
        super().__init__(config, timeouts, joints)
        self.description = f"topic gripper ({config.command_topic})"
        self.publisher = node.create_publisher(Float64MultiArray, config.command_topic, 10)

    def open(self, cancel: threading.Event) -> MotionResult:
        return self._command(self.config.open_position_m, cancel, expect_object=False)

    def close(self, cancel: threading.Event, *, expect_object: bool) -> MotionResult:
        return self._command(self.config.closed_position_m, cancel, expect_object=expect_object)

    def _command(
        self, target: float, cancel: threading.Event, *, expect_object: bool
    ) -> MotionResult:
        cfg = self.config
        end = wait_for_subscriber(
            self.publisher.get_subscription_count, cancel=cancel, timeout_s=self.timeouts.server_s
        )
        problem = ready_to_send(
            end,
            canceled="canceled before the gripper moved",
            missing=f"nothing subscribes to {cfg.command_topic} within "
            f"{self.timeouts.server_s:g} s (is the gripper controller running?)",
        )
        if problem is not None:
            return problem
        end, _ = self.joints.wait_for(self.finger, cancel=cancel, timeout_s=self.timeouts.topic_s)
        problem = ready_to_send(
            end, canceled="canceled before the gripper moved", missing=self._silent().message
        )
        if problem is not None:
            return problem
        self.publisher.publish(Float64MultiArray(data=[float(target)]))
        end = self._wait_settled(target, cancel, Deadline(self.timeouts.gripper_s))
        return motion_result(
            end,
            done=lambda: self._verdict(target, expect_object),
            silent=self._silent,
            stop=self._hold,
            canceled="gripper command canceled; fingers holding position",
            missed=lambda: MotionResult.failure(
                f"gripper did not settle within {self.timeouts.gripper_s:g} s "
                f"(fingers at {mm_or_unknown(self.position())})"
            ),
        )

    def _hold(self) -> None:
        """Hold the fingers where they are: a command to their current position."""
        position = self.position()
        if position is not None:
            self.publisher.publish(Float64MultiArray(data=[position]))


class _ActionGripperBase(_GripperBase):
    """One action goal per open/close; the fingers' position on /joint_states decides.

    An abort whose result says `stalled` is the fingers stopping on something (the
    controller aborts a stall unless allow_stalling is set), so it is judged like a
    success: by where the fingers settle.
    """

    ACTION = ""  # control_msgs action name

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
            node, self.ACTION, config.gripper_action, callback_group, action_type, client
        )
        self.description = f"{self.ACTION} gripper ({config.gripper_action})"

    def open(self, cancel: threading.Event) -> MotionResult:
        return self._command(self.config.open_position_m, cancel, expect_object=False)

    def close(self, cancel: threading.Event, *, expect_object: bool) -> MotionResult:
        return self._command(self.config.closed_position_m, cancel, expect_object=expect_object)

    def _goal(self, target: float) -> Any:
        raise NotImplementedError

    def _result_position(self, result: Any) -> float | None:
        raise NotImplementedError

    def _command(
        self, target: float, cancel: threading.Event, *, expect_object: bool
    ) -> MotionResult:
        deadline = Deadline(self.timeouts.gripper_s)
        outcome, result = run_action(
            self.client,
            self._goal(target),
            server=self.config.gripper_action,
            kind=self.ACTION,
            cancel=cancel,
            server_s=self.timeouts.server_s,
            motion_s=deadline,
            hint=f"is {self.config.controller} active?",
        )
        stalled = result is not None and bool(getattr(result, "stalled", False))
        if not outcome.ok and not (outcome.status is Status.FAILED and stalled):
            return outcome
        # Where the fingers come to rest decides; the result may come early (a stall
        # reported while they still move, a goal "reached" within a coarse tolerance).
        end, _ = self.joints.wait_for(self.finger, cancel=cancel, timeout_s=0.5)
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled("canceled while reading the finger position")
        if self.position() is None:
            position = self._result_position(result)
            if position is None:
                return self._silent()
            return self._verdict_at(position, target, expect_object)
        left_s = max(deadline.end - time.monotonic(), 1.0)
        # The controller's result shows it acted on the goal: unmoved fingers need only
        # be heard still for a settle time, as fingers that stopped do.
        end = self._wait_settled(
            target, cancel, Deadline(left_s), response_s=self.config.settle_time_s
        )
        return motion_result(
            end,
            done=lambda: self._verdict(target, expect_object),
            silent=self._silent,
            canceled="canceled while the fingers settled",
            missed=lambda: MotionResult.failure(
                f"{self.config.gripper_action} ended, but the fingers did not settle within "
                f"{left_s:.1f} s (at {mm_or_unknown(self.position())})"
            ),
        )

    def _verdict_at(self, position: float, target: float, expect_object: bool) -> MotionResult:
        """The verdict from the action result's position, when no joint state is heard."""
        cfg = self.config
        if target == cfg.open_position_m:
            return MotionResult.success(f"gripper open ({mm(position)})")
        if not expect_object or position > cfg.grasp_threshold_m:
            return MotionResult.success(f"gripper closed at {mm(position)}")
        return MotionResult.failure(f"grasp failed: fingers closed to {mm(position)}, nothing held")


class ParallelGripper(_ActionGripperBase):
    """control_msgs/action/ParallelGripperCommand (Kilted's parallel_gripper_action_controller).

    The goal names the finger joint with its target position and, as `effort`, the
    force limit (the controller applies it when it claims a max_effort interface).
    """

    ACTION = "ParallelGripperCommand"

    def _goal(self, target: float) -> Any:
        goal = self.action_type.Goal()
        goal.command.name = [self.config.finger_joint]
        goal.command.position = [float(target)]
        goal.command.effort = [float(self.config.effort_command())]
        return goal

    def _result_position(self, result: Any) -> float | None:
        positions = list(getattr(getattr(result, "state", None), "position", []) or [])
        return float(positions[0]) if positions else None


class CommandGripper(_ActionGripperBase):
    """control_msgs/action/GripperCommand, for drivers that still serve it (not Kilted's
    ros2_controllers: its GripperActionController was removed there)."""

    ACTION = "GripperCommand"

    def _goal(self, target: float) -> Any:
        goal = self.action_type.Goal()
        goal.command.position = float(target)
        goal.command.max_effort = float(self.config.effort_command())
        return goal

    def _result_position(self, result: Any) -> float | None:
        return None if result is None else float(result.position)
