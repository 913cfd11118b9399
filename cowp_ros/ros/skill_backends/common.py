"""What every ROS skill backend shares: its timeouts, the joint-state cache, and the
waits of `cowp_ros.ros.waiting` (imported from here by the backends).

A backend's call runs in the executor's action callback while subscriptions and action
responses arrive on other threads of the MultiThreadedExecutor. Each wait here wakes
on every message, checks the cancel event, and ends at a deadline; a topic that never
speaks and a server that never appears end in a failure naming them, never a hang.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from cowp_ros.errors import CowpError
from cowp_ros.ros.waiting import (
    POLL_S,
    Deadline,
    Signal,
    WaitEnd,
    run_action,
    wait_for_subscriber,
    wait_future,
    wait_until,
)
from cowp_ros.skills.interfaces import MotionResult


@dataclass(frozen=True)
class Timeouts:
    """Seconds each kind of wait may take before the step fails (executor parameters)."""

    server_s: float = 5.0  # an action server or a command topic's subscriber to appear
    topic_s: float = 3.0  # silence on a state topic (odometry, joint states, detections)
    navigate_s: float = 120.0  # a whole drive
    arm_margin_s: float = 10.0  # beyond the planned duration of an arm move
    gripper_s: float = 10.0  # a gripper open/close
    detect_s: float = 5.0  # the detector to report the object looked for


class JointStateCache:
    """Latest position of every joint seen on a JointState topic, by name.

    Several publishers may share /joint_states (the arm's broadcaster, the gripper's),
    each with its own subset of joints, so positions are merged by name and each
    joint remembers when it was last heard.
    """

    def __init__(self, node: Node, topic: str, callback_group: CallbackGroup | None) -> None:
        self.topic = topic
        self.signal = Signal()
        self._lock = threading.Lock()
        self._positions: dict[str, float] = {}
        self._heard: dict[str, float] = {}
        self.subscription = node.create_subscription(
            JointState, topic, self._on_message, qos_profile_sensor_data,
            callback_group=callback_group,
        )  # fmt: skip

    def _on_message(self, msg: JointState) -> None:
        now = time.monotonic()
        with self._lock:
            for name, position in zip(msg.name, msg.position, strict=False):
                self._positions[name] = float(position)
                self._heard[name] = now
        self.signal.notify()

    def positions(self, names: tuple[str, ...]) -> tuple[float, ...] | None:
        """Positions of all `names`, or None while any of them was never heard."""
        sample = self.sample(names)
        return None if sample is None else sample[0]

    def sample(self, names: tuple[str, ...]) -> tuple[tuple[float, ...], float] | None:
        """Positions of `names` with when the least recently heard of them arrived, read
        together (None while any was never heard)."""
        with self._lock:
            if not all(n in self._positions for n in names):
                return None
            return tuple(self._positions[n] for n in names), min(self._heard[n] for n in names)

    def last_heard(self, names: tuple[str, ...]) -> float | None:
        """When the least recently heard of `names` was last heard (None: one never was)."""
        with self._lock:
            times = [self._heard.get(n) for n in names]
        if any(t is None for t in times):
            return None
        return min(t for t in times if t is not None)

    def wait_for(
        self, names: tuple[str, ...], *, cancel: threading.Event, timeout_s: float
    ) -> tuple[WaitEnd, tuple[float, ...] | None]:
        """Wait for the first positions of `names` (silence beyond `timeout_s` fails)."""
        end = wait_until(
            lambda: self.positions(names) is not None,
            cancel=cancel,
            deadline=time.monotonic() + timeout_s,
            signal=self.signal,
        )
        return end, self.positions(names)


def silent_message(topic: str, what: str, seconds: float) -> str:
    return f"no {what} on {topic} for {seconds:g} s (is its publisher running?)"


Outcome = MotionResult | Callable[[], MotionResult]


def motion_result(
    end: WaitEnd,
    *,
    done: Outcome,
    canceled: str,
    missed: Outcome,
    silent: Outcome | None = None,
    stop: Callable[[], None] | None = None,
) -> MotionResult:
    """What a wait for a motion comes to, the same for every backend: `done` when it
    ended as wanted; `silent` when its sensor stopped speaking (nothing is stopped: there
    is no reading to stop at); otherwise the motion is stopped where it is (`stop`)
    before the result says canceled, or `missed` (its deadline passed). A result given
    as a function is worked out only when it is the one returned (it reads the state)."""
    if end is WaitEnd.DONE:
        return _outcome(done)
    if end is WaitEnd.SILENT and silent is not None:
        return _outcome(silent)
    if stop is not None:
        stop()
    if end is WaitEnd.CANCELED:
        return MotionResult.canceled(canceled)
    return _outcome(missed)


def ready_to_send(end: WaitEnd, *, canceled: str, missing: str) -> MotionResult | None:
    """None when the wait before a command (for its subscriber, its first reading) ended
    as wanted; else the result to return: canceled, or a failure naming what is missing."""
    if end is WaitEnd.DONE:
        return None
    if end is WaitEnd.CANCELED:
        return MotionResult.canceled(canceled)
    return MotionResult.failure(missing)


def _outcome(outcome: Outcome) -> MotionResult:
    return outcome if isinstance(outcome, MotionResult) else outcome()


__all__ = [
    "POLL_S",
    "Deadline",
    "JointStateCache",
    "Signal",
    "Timeouts",
    "WaitEnd",
    "action_client",
    "import_action_type",
    "motion_result",
    "ready_to_send",
    "run_action",
    "silent_message",
    "wait_for_subscriber",
    "wait_future",
    "wait_until",
]


def import_action_type(package: str, name: str, *, apt_package: str, instead: str) -> Any:
    """`package.action.name`, imported only when a backend needs it, or a CowpError
    naming the apt package to install (control_msgs and nav2_msgs are not on PyPI)."""
    try:
        module = importlib.import_module(f"{package}.action")
    except ImportError as err:
        raise CowpError(
            f"this backend needs {package}/action/{name}, and {package} is not installed",
            hint=f"sudo apt install {apt_package} (and source /opt/ros/kilted/setup.bash), "
            f"or {instead}",
        ) from err
    return getattr(module, name)


def action_client(
    node: Node,
    action_type: Any,
    action_name: str,
    callback_group: CallbackGroup | None,
    client: Any | None = None,
) -> Any:
    """An rclpy ActionClient on `action_name` (or the test double given as `client`)."""
    if client is not None:
        return client
    from rclpy.action import ActionClient

    return ActionClient(node, action_type, action_name, callback_group=callback_group)
