"""UR5e arm backends over the scaled_joint_trajectory_controller.

Both send one trajectory point at a speed bounded by robot.yaml (slow on purpose) and
judge completion on /joint_states, where the truth about the arm is: the topic backend
because a topic has no result, the action backend to catch a controller that reports
success short of the target. control_msgs is imported only for the action backend.

A move's deadline follows the speed scaling the UR driver publishes: the scaled joint
trajectory controller plays the trajectory at the pendant's speed slider (times any
safety slowdown), so a move planned for 3.6 s takes 36 s at 10 %. A wall-clock budget
would cancel it mid-motion; `ScaledDeadline` advances the trajectory's clock at the
reported scaling instead, and only then counts the margin.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from builtin_interfaces.msg import Duration
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from std_msgs.msg import Float64
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cowp_ros.ros.skill_backends.common import (
    POLL_S,
    Deadline,
    JointStateCache,
    Timeouts,
    WaitEnd,
    action_client,
    import_action_type,
    motion_result,
    ready_to_send,
    run_action,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.skills.backends import CONTROL_MSGS
from cowp_ros.skills.config import ArmConfig
from cowp_ros.skills.interfaces import MotionResult, Status
from cowp_ros.skills.joint_path import timed_path

CONTROL_MSGS_APT_PACKAGE = CONTROL_MSGS.apt
# The UR driver's speed_scaling_state_broadcaster publishes std_msgs/Float64 in percent
# (the hardware's factor times 100): docs/kilted_interfaces.md.
SPEED_SCALING_FULL = 100.0


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


def path_trajectory(
    joint_names: Sequence[str], config: ArmConfig, start: Sequence[float], waypoints
) -> tuple[JointTrajectory, float]:
    """A trajectory through `waypoints` (the last the goal), timed from `start`; and its
    duration."""
    points = timed_path(
        start, waypoints, config.max_joint_velocity_rad_s, config.min_move_duration_s
    )
    msg = JointTrajectory()
    msg.joint_names = list(joint_names)
    msg.points = [
        JointTrajectoryPoint(
            positions=list(p.positions),
            velocities=list(p.velocities),
            time_from_start=duration_msg(p.time_s),
        )
        for p in points
    ]
    return msg, points[-1].time_s


def import_control_msgs_action(name: str) -> Any:
    """control_msgs.action.<name>, or a CowpError saying what to install."""
    return import_action_type(
        "control_msgs",
        name,
        apt_package=CONTROL_MSGS_APT_PACKAGE,
        instead="set the executor's arm_backend / gripper_backend parameter to 'topic'",
    )


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
    return action_type, action_client(node, action_type, action_name, callback_group, client)


class SpeedScaling:
    """The speed scaling the UR driver reports, as a factor (1.0 = full speed).

    None until the first message: without the broadcaster (Gazebo, another arm) moves
    are timed at full speed, and deadline messages say so.
    """

    def __init__(self, node: Node, topic: str, callback_group: CallbackGroup | None) -> None:
        self.topic = topic
        self._lock = threading.Lock()
        self._factor: float | None = None
        self.subscription = node.create_subscription(
            Float64, topic, self._on_message, 10, callback_group=callback_group
        )

    def _on_message(self, msg: Float64) -> None:
        with self._lock:
            self._factor = max(0.0, float(msg.data) / SPEED_SCALING_FULL)

    def factor(self) -> float | None:
        with self._lock:
            return self._factor


class ScaledDeadline(Deadline):
    """Expires `margin_s` after the trajectory should have ended at the reported scaling.

    The trajectory's own clock advances by wall time times the speed scaling (never
    less than `floor`, so a paused program or a slider at 0 still ends the step, late);
    once it reaches `planned_s`, the wall-clock margin starts.
    """

    def __init__(
        self,
        planned_s: float,
        margin_s: float,
        scaling: SpeedScaling | None,
        floor: float,
    ) -> None:
        self.planned_s = planned_s
        self.margin_s = margin_s
        self.scaling = scaling
        self.floor = floor
        self.seconds = planned_s + margin_s  # at full speed
        self._last = time.monotonic()
        self._progress = 0.0
        self._ended_at: float | None = None
        self._lowest: float | None = None

    def _advance(self) -> float:
        now = time.monotonic()
        factor = self.scaling.factor() if self.scaling is not None else None
        if factor is not None:
            self._lowest = factor if self._lowest is None else min(self._lowest, factor)
        rate = 1.0 if factor is None else max(factor, self.floor)
        self._progress += (now - self._last) * rate
        self._last = now
        if self._ended_at is None and self._progress >= self.planned_s:
            self._ended_at = now
        return now

    def expired(self) -> bool:
        now = self._advance()
        return self._ended_at is not None and now - self._ended_at >= self.margin_s

    def poll_step(self) -> float:
        return POLL_S

    def describe(self) -> str:
        if self._lowest is None:
            where = f" on {self.scaling.topic}" if self.scaling is not None else ""
            return (
                f"within {self.planned_s + self.margin_s:g} s (no speed scaling heard{where}: "
                "timed at full speed)"
            )
        return (
            f"within its {self.planned_s:g} s trajectory at the reported speed scaling "
            f"(as low as {self._lowest * SPEED_SCALING_FULL:.0f} %) plus {self.margin_s:g} s"
        )


class _ArmBase:
    """What both arm backends share: the joint-state view, deadlines and the check."""

    def __init__(
        self,
        config: ArmConfig,
        timeouts: Timeouts,
        joints: JointStateCache,
        scaling: SpeedScaling | None,
    ) -> None:
        self.config = config
        self.timeouts = timeouts
        self.joints = joints
        self.scaling = scaling

    def _deadline(self, planned_s: float) -> ScaledDeadline:
        return ScaledDeadline(
            planned_s, self.timeouts.arm_margin_s, self.scaling, self.config.min_speed_scaling
        )

    def _current(self, cancel: threading.Event) -> tuple[MotionResult | None, tuple[float, ...]]:
        names = self.config.joint_names
        end, positions = self.joints.wait_for(names, cancel=cancel, timeout_s=self.timeouts.topic_s)
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled("canceled before the arm moved"), ()
        if positions is None:
            return MotionResult.failure(
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
        self, name: str, goal: Sequence[float], cancel: threading.Event, deadline: Deadline
    ) -> WaitEnd:
        names = self.config.joint_names
        return wait_until(
            lambda: self._at(goal),
            cancel=cancel,
            deadline=deadline,
            signal=self.joints.signal,
            silence_s=self.timeouts.topic_s,
            heard=lambda: self.joints.last_heard(names),
        )

    def _missed(self, name: str, goal: Sequence[float], deadline: Deadline) -> MotionResult:
        joint, error = self._worst_error(goal)
        return MotionResult.failure(
            f"arm did not reach pose '{name}' {deadline.describe()} "
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
        scaling: SpeedScaling | None = None,
    ) -> None:
        super().__init__(config, timeouts, joints, scaling)
        self.description = f"topic arm ({config.trajectory_topic})"
        self.publisher = node.create_publisher(JointTrajectory, config.trajectory_topic, 10)

    def move_to(
        self,
        name: str,
        positions: Sequence[float],
        cancel: threading.Event,
        via: Sequence[Sequence[float]] = (),
    ) -> MotionResult:
        end = wait_for_subscriber(
            self.publisher.get_subscription_count, cancel=cancel, timeout_s=self.timeouts.server_s
        )
        problem = ready_to_send(
            end,
            canceled="canceled before the arm moved",
            missing=f"nothing subscribes to {self.config.trajectory_topic} within "
            f"{self.timeouts.server_s:g} s (is {self.config.controller} active?)",
        )
        if problem is not None:
            return problem
        problem, start = self._current(cancel)
        if problem is not None:
            return problem
        msg, seconds = path_trajectory(
            self.config.joint_names, self.config, start, [*via, positions]
        )
        self.publisher.publish(msg)
        deadline = self._deadline(seconds)
        end = self._wait_arrival(name, positions, cancel, deadline)
        return motion_result(
            end,
            done=MotionResult.success(f"arm at {name}"),
            silent=MotionResult.failure(
                silent_message(self.joints.topic, "arm joint states", self.timeouts.topic_s)
            ),
            stop=self._hold,
            canceled=f"arm move to {name} canceled; arm holding position",
            missed=lambda: self._missed(name, positions, deadline),
        )

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
        scaling: SpeedScaling | None = None,
        action_type: Any | None = None,
        client: Any | None = None,
    ) -> None:
        super().__init__(config, timeouts, joints, scaling)
        self.action_type, self.client = control_msgs_client(
            node,
            "FollowJointTrajectory",
            config.follow_joint_trajectory_action,
            callback_group,
            action_type,
            client,
        )
        self.description = f"FollowJointTrajectory arm ({config.follow_joint_trajectory_action})"

    def move_to(
        self,
        name: str,
        positions: Sequence[float],
        cancel: threading.Event,
        via: Sequence[Sequence[float]] = (),
    ) -> MotionResult:
        problem, start = self._current(cancel)
        if problem is not None:
            return problem
        goal = self.action_type.Goal()
        goal.trajectory, seconds = path_trajectory(
            self.config.joint_names, self.config, start, [*via, positions]
        )
        deadline = self._deadline(seconds)
        outcome, result = run_action(
            self.client,
            goal,
            server=self.config.follow_joint_trajectory_action,
            kind="FollowJointTrajectory",
            cancel=cancel,
            server_s=self.timeouts.server_s,
            motion_s=deadline,
            hint=f"is {self.config.controller} active?",
        )
        code = getattr(result, "error_code", 0) if result is not None else 0
        if code != 0 and outcome.status is not Status.CANCELED:
            # The controller's own words (PATH_TOLERANCE_VIOLATED, a protective stop...)
            # say more than "aborted", whether it aborted the goal or reported success.
            error = f"controller error {code}: {getattr(result, 'error_string', '')}"
            outcome = MotionResult.failure(
                f"arm move to {name}: {error.rstrip(': ')}"
                + ("" if outcome.ok else f" ({outcome.message})")
            )
        if not outcome.ok:
            return outcome
        # The controller says done: the joints must agree (briefly, they may still settle).
        settle = Deadline(1.0)
        end = self._wait_arrival(name, positions, cancel, settle)
        return motion_result(
            end,
            done=MotionResult.success(f"arm at {name}"),
            canceled=f"canceled while confirming the arm at {name}",
            missed=lambda: self._missed(name, positions, deadline),
        )
