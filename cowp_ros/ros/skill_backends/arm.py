"""UR5e arm backends over the scaled_joint_trajectory_controller.

Both send one trajectory point at a speed bounded by robot.yaml (slow on purpose) and
judge completion on /joint_states, where the truth about the arm is: the topic backend
because a topic has no result, the action backend to catch a controller that reports
success short of the target. control_msgs is imported only for the action backend.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from builtin_interfaces.msg import Duration
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.common import (
    JointStateCache,
    Timeouts,
    WaitEnd,
    run_action,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.skills.config import ArmConfig
from cowp_ros.skills.interfaces import Outcome

CONTROL_MSGS_APT_PACKAGE = "ros-kilted-control-msgs"


def duration_msg(seconds: float) -> Duration:
    whole = int(seconds)
    return Duration(sec=whole, nanosec=min(999_999_999, round((seconds - whole) * 1e9)))


def trajectory(joint_names: Sequence[str], positions: Sequence[float], seconds: float):
    msg = JointTrajectory()
    msg.joint_names = list(joint_names)
    msg.points = [
        JointTrajectoryPoint(
            positions=[float(p) for p in positions],
            velocities=[0.0] * len(positions),
            time_from_start=duration_msg(seconds),
        )
    ]
    return msg


def import_control_msgs_action(name: str) -> Any:
    """control_msgs.action.<name>, or a CowpError saying what to install."""
    try:
        import control_msgs.action as actions
    except ImportError as err:
        raise CowpError(
            f"the action backend needs control_msgs ({name}), which is not installed",
            hint=f"sudo apt install {CONTROL_MSGS_APT_PACKAGE} (and source /opt/ros/kilted), "
            "or set the executor's arm_backend / gripper_backend parameter to 'topic'",
        ) from err
    return getattr(actions, name)


def control_msgs_client(
    node: Node,
    name: str,
    action_name: str,
    callback_group: CallbackGroup | None,
    action_type: Any | None = None,
    client: Any | None = None,
) -> tuple[Any, Any]:
    """(action type, client) of control_msgs.action.<name> on `action_name`.

    `action_type` and `client` are the unit tests' doubles; the real ones are made only
    when not given, so a machine without control_msgs can still test the backends.
    """
    action_type = action_type or import_control_msgs_action(name)
    if client is None:
        from rclpy.action import ActionClient

        client = ActionClient(node, action_type, action_name, callback_group=callback_group)
    return action_type, client


class _ArmBase:
    """What both arm backends share: the joint-state view and the completion check."""

    def __init__(self, config: ArmConfig, timeouts: Timeouts, joints: JointStateCache) -> None:
        self.config = config
        self.timeouts = timeouts
        self.joints = joints

    def _current(self, cancel: threading.Event) -> tuple[Outcome | None, tuple[float, ...]]:
        names = self.config.joint_names
        end, positions = self.joints.wait_for(names, cancel=cancel, timeout_s=self.timeouts.topic_s)
        if end is WaitEnd.CANCELED:
            return Outcome.canceled("canceled before the arm moved"), ()
        if positions is None:
            return Outcome.failure(
                silent_message(
                    self.joints.topic,
                    f"sensor_msgs/JointState with the arm joints ({', '.join(names)})",
                    self.timeouts.topic_s,
                )
            ), ()
        return None, positions

    def _worst_error(self, goal: Sequence[float]) -> tuple[str, float]:
        current = self.joints.positions(self.config.joint_names)
        if current is None:
            return "?", float("inf")
        errors = [abs(c - g) for c, g in zip(current, goal, strict=True)]
        index = max(range(len(errors)), key=errors.__getitem__)
        return self.config.joint_names[index], errors[index]

    def _at(self, goal: Sequence[float]) -> bool:
        return self._worst_error(goal)[1] <= self.config.joint_tolerance_rad

    def _wait_arrival(
        self, name: str, goal: Sequence[float], cancel: threading.Event, seconds: float
    ) -> WaitEnd:
        names = self.config.joint_names
        return wait_until(
            lambda: self._at(goal),
            cancel=cancel,
            deadline=time.monotonic() + seconds,
            signal=self.joints.signal,
            silence_s=self.timeouts.topic_s,
            heard=lambda: self.joints.last_heard(names),
        )

    def _missed(self, name: str, goal: Sequence[float], seconds: float) -> Outcome:
        joint, error = self._worst_error(goal)
        return Outcome.failure(
            f"arm did not reach pose '{name}' within {seconds:g} s "
            f"({joint} is {error:.3f} rad off, tolerance {self.config.joint_tolerance_rad:g})"
        )


class TopicArm(_ArmBase):
    """JointTrajectory on the controller's topic; arrival read on /joint_states."""

    def __init__(
        self,
        node: Node,
        config: ArmConfig,
        timeouts: Timeouts,
        joints: JointStateCache,
    ) -> None:
        super().__init__(config, timeouts, joints)
        self.description = f"topic arm ({config.trajectory_topic})"
        self.publisher = node.create_publisher(JointTrajectory, config.trajectory_topic, 10)

    def move_to(self, name: str, positions: Sequence[float], cancel: threading.Event) -> Outcome:
        end = wait_for_subscriber(
            self.publisher.get_subscription_count, cancel=cancel, timeout_s=self.timeouts.server_s
        )
        if end is WaitEnd.CANCELED:
            return Outcome.canceled("canceled before the arm moved")
        if end is not WaitEnd.DONE:
            return Outcome.failure(
                f"nothing subscribes to {self.config.trajectory_topic} within "
                f"{self.timeouts.server_s:g} s (is {self.config.controller} active?)"
            )
        problem, start = self._current(cancel)
        if problem is not None:
            return problem
        seconds = self.config.move_duration(start, tuple(positions))
        self.publisher.publish(trajectory(self.config.joint_names, positions, seconds))
        budget = seconds + self.timeouts.arm_margin_s
        end = self._wait_arrival(name, positions, cancel, budget)
        if end is WaitEnd.DONE:
            return Outcome.success(f"arm at {name}")
        if end is WaitEnd.SILENT:
            return Outcome.failure(
                silent_message(self.joints.topic, "arm joint states", self.timeouts.topic_s)
            )
        self._hold()
        if end is WaitEnd.CANCELED:
            return Outcome.canceled(f"arm move to {name} canceled; arm holding position")
        return self._missed(name, positions, budget)

    def _hold(self) -> None:
        """Stop where the arm is: a short trajectory to its current positions."""
        current = self.joints.positions(self.config.joint_names)
        if current is not None:
            self.publisher.publish(trajectory(self.config.joint_names, current, 0.1))


class ActionArm(_ArmBase):
    """control_msgs/FollowJointTrajectory; the result is confirmed on /joint_states."""

    def __init__(
        self,
        node: Node,
        config: ArmConfig,
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
            "FollowJointTrajectory",
            config.follow_joint_trajectory_action,
            callback_group,
            action_type,
            client,
        )
        self.description = f"FollowJointTrajectory arm ({config.follow_joint_trajectory_action})"

    def move_to(self, name: str, positions: Sequence[float], cancel: threading.Event) -> Outcome:
        problem, start = self._current(cancel)
        if problem is not None:
            return problem
        seconds = self.config.move_duration(start, tuple(positions))
        goal = self.action_type.Goal()
        goal.trajectory = trajectory(self.config.joint_names, positions, seconds)
        budget = seconds + self.timeouts.arm_margin_s
        outcome, result = run_action(
            self.client,
            goal,
            server=self.config.follow_joint_trajectory_action,
            kind="FollowJointTrajectory",
            cancel=cancel,
            server_s=self.timeouts.server_s,
            motion_s=budget,
        )
        code = getattr(result, "error_code", 0) if result is not None else 0
        if outcome.ok and code != 0:
            outcome = Outcome.failure(
                f"controller error {code}: {getattr(result, 'error_string', '')}".rstrip(": ")
            )
        if not outcome.ok:
            return outcome
        # The controller says done: the joints must agree (briefly, they may still settle).
        end = self._wait_arrival(name, positions, cancel, 1.0)
        if end is WaitEnd.DONE:
            return Outcome.success(f"arm at {name}")
        if end is WaitEnd.CANCELED:
            return Outcome.canceled(f"canceled while confirming the arm at {name}")
        return self._missed(name, positions, budget)
