"""Waiting without hanging: the pieces every ROS backend shares.

A backend's call runs in the executor's action callback while subscriptions and action
responses arrive on other threads of the MultiThreadedExecutor. Each wait here wakes
on every message, checks the cancel event, and ends at a deadline; a topic that never
speaks and a server that never appears end in a failure naming them, never a hang.
"""

from __future__ import annotations

import enum
import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from cowp_ros.errors import CowpError
from cowp_ros.skills.interfaces import Outcome

# How often a wait re-checks cancel and deadlines when no message wakes it.
POLL_S = 0.05


@dataclass(frozen=True)
class Timeouts:
    """Seconds each kind of wait may take before the step fails (executor parameters)."""

    server_s: float = 5.0  # an action server or a command topic's subscriber to appear
    topic_s: float = 3.0  # silence on a state topic (odometry, joint states, detections)
    navigate_s: float = 120.0  # a whole drive
    arm_margin_s: float = 10.0  # beyond the planned duration of an arm move
    gripper_s: float = 10.0  # a gripper open/close
    detect_s: float = 5.0  # the detector to report the object looked for


class Deadline:
    """A wall-clock deadline: `seconds` from now.

    Waits ask a deadline whether it has expired instead of comparing clocks, so a
    motion whose speed the robot decides (the UR's speed slider) can use a deadline
    that moves with it (`ScaledDeadline` in arm.py) through the same waits.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def poll_step(self) -> float:
        """How long a wait may sleep before asking again."""
        return max(0.0, min(POLL_S, self.end - time.monotonic()))

    def describe(self) -> str:
        return f"within {self.seconds:g} s"


class WaitEnd(enum.Enum):
    DONE = "done"
    CANCELED = "canceled"
    TIMEOUT = "timeout"
    SILENT = "silent"


class Signal:
    """Wakes waiters on every message and remembers when the last one came."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.last_at: float | None = None

    def notify(self) -> None:
        with self.condition:
            self.last_at = time.monotonic()
            self.condition.notify_all()

    def wait(self, timeout_s: float) -> None:
        with self.condition:
            self.condition.wait(timeout_s)


def wait_until(
    done: Callable[[], bool],
    *,
    cancel: threading.Event,
    deadline: float | Deadline,
    signal: Signal | None = None,
    silence_s: float | None = None,
    heard: Callable[[], float | None] | None = None,
) -> WaitEnd:
    """Block until `done()`, cancel, the deadline, or `silence_s` without a message.

    `deadline` is a `time.monotonic()` instant or a `Deadline`. `heard()` gives when
    the relevant data last arrived (default: the signal's last message); silence is
    counted from the later of that and the start of the wait.
    """
    start = time.monotonic()
    if not isinstance(deadline, Deadline):
        deadline = Deadline(deadline - start)
    last_heard = heard or (lambda: signal.last_at if signal else None)
    while True:
        if cancel.is_set():
            return WaitEnd.CANCELED
        if done():
            return WaitEnd.DONE
        if deadline.expired():
            return WaitEnd.TIMEOUT
        now = time.monotonic()
        if silence_s is not None:
            since = max(start, last_heard() or start)
            if now - since >= silence_s:
                return WaitEnd.SILENT
        step = deadline.poll_step()
        if signal is not None:
            signal.wait(step)
        else:
            time.sleep(step)


def wait_for_subscriber(
    count: Callable[[], int], *, cancel: threading.Event, timeout_s: float
) -> WaitEnd:
    """Wait until something subscribes to a command topic (graph discovery takes time)."""
    return wait_until(lambda: count() > 0, cancel=cancel, deadline=time.monotonic() + timeout_s)


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
        with self._lock:
            if not all(n in self._positions for n in names):
                return None
            return tuple(self._positions[n] for n in names)

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


def wait_future(future: Any, *, cancel: threading.Event, deadline: float | Deadline) -> WaitEnd:
    """Wait for an rclpy future completed by another executor thread."""
    return wait_until(future.done, cancel=cancel, deadline=deadline)


def run_action(
    client: Any,
    goal: Any,
    *,
    server: str,
    kind: str,
    cancel: threading.Event,
    timeouts: Timeouts,
    motion_s: float | Deadline,
    feedback: Callable[[Any], None] | None = None,
    hint: str = "is its controller running?",
) -> tuple[Outcome, Any]:
    """Send one goal and wait for its result, with timeouts and cancel.

    Returns the outcome and the action's result message (None when there is none).
    `motion_s` is seconds or a `Deadline`, started once the server is there. Works
    with rclpy's ActionClient and with any object of the same shape.
    """
    if not client.wait_for_server(timeout_sec=timeouts.server_s):
        return Outcome.failure(
            f"{kind} action server {server} not available within {timeouts.server_s:g} s ({hint})"
        ), None
    deadline = motion_s if isinstance(motion_s, Deadline) else Deadline(motion_s)
    send_future = client.send_goal_async(goal, feedback_callback=feedback)
    end = wait_future(send_future, cancel=cancel, deadline=deadline)
    if end is not WaitEnd.DONE:
        # A goal accepted after we gave up must not move the robot on its own.
        send_future.add_done_callback(_cancel_when_accepted)
        if end is WaitEnd.CANCELED:
            return Outcome.canceled(f"canceled before {server} accepted the goal"), None
        return Outcome.failure(f"{server} did not answer the goal {deadline.describe()}"), None
    handle = send_future.result()
    if handle is None or not handle.accepted:
        return Outcome.failure(f"{server} rejected the {kind} goal"), None
    result_future = handle.get_result_async()
    end = wait_future(result_future, cancel=cancel, deadline=deadline)
    if end is not WaitEnd.DONE:
        handle.cancel_goal_async()
        # Give the server a moment to confirm the stop; the result is not needed.
        wait_future(result_future, cancel=threading.Event(), deadline=time.monotonic() + 2.0)
        if end is WaitEnd.CANCELED:
            return Outcome.canceled(f"{kind} goal canceled on {server}"), None
        return Outcome.failure(
            f"{server} did not finish {deadline.describe()}; goal canceled"
        ), None
    wrapped = result_future.result()
    status, result = wrapped.status, wrapped.result
    if status == GoalStatus.STATUS_SUCCEEDED:
        return Outcome.success(f"{server} succeeded"), result
    if status == GoalStatus.STATUS_CANCELED:
        return Outcome.canceled(f"{server} canceled the {kind} goal"), result
    return Outcome.failure(f"{server} aborted the {kind} goal (status {status})"), result


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


def _cancel_when_accepted(future: Any) -> None:
    handle = future.result()
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()
