"""Waiting without hanging: the one way the ROS layer waits on the graph.

Every wait of a node (a service answer, an action result, a message) runs in a callback
of a MultiThreadedExecutor while the reply arrives on another thread. Each wait here
wakes on every message or at least every `POLL_S`, checks the cancel flag and whether
the other side is still there, and ends at a deadline: a server that never answers, a
node that died mid-call and a topic that never speaks end in a result that names them,
never in a hang, and a cancel ends the wait within `POLL_S`.

`cancel` is anything with `is_set()`: a `threading.Event`, or the run's
`cowp_ros.cowp.cancel.CancelToken`.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from action_msgs.msg import GoalStatus

from cowp_ros.cowp.cancel import RunCancelledError
from cowp_ros.errors import CowpError
from cowp_ros.skills.interfaces import MotionResult

POLL_S = 0.05
"""How often a wait re-checks cancel, liveness and deadlines when no message wakes it."""

GONE_AFTER_S = 3.0
"""How long the other side may look absent before a wait gives up on it (discovery
flickers for a moment under load; a dead node stays gone). A node killed outright
looks absent only once its DDS lease runs out: 3 s for the nodes cowp starts
(`cowp_ros.bringup.liveliness`), 20 s under Fast DDS's defaults, so a dead node is
noticed in about 3 + 3 s, or 20 + 3 s for a node started some other way."""


class Cancellable(Protocol):
    def is_set(self) -> bool: ...


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
    GONE = "gone"  # the other side went away (its node died)


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
    cancel: Cancellable,
    deadline: float | Deadline,
    signal: Signal | None = None,
    silence_s: float | None = None,
    heard: Callable[[], float | None] | None = None,
    alive: Callable[[], bool] | None = None,
) -> WaitEnd:
    """Block until `done()`, cancel, the deadline, or `silence_s` without a message.

    `deadline` is a `time.monotonic()` instant or a `Deadline`. `heard()` gives when
    the relevant data last arrived (default: the signal's last message); silence is
    counted from the later of that and the start of the wait. `alive()` says whether
    the other side is still there; absent for `GONE_AFTER_S` in a row, the wait ends
    `GONE`.
    """
    start = time.monotonic()
    if not isinstance(deadline, Deadline):
        deadline = Deadline(deadline - start)
    last_heard = heard or (lambda: signal.last_at if signal else None)
    gone_since: float | None = None
    while True:
        if cancel.is_set():
            return WaitEnd.CANCELED
        if done():
            return WaitEnd.DONE
        if deadline.expired():
            return WaitEnd.TIMEOUT
        now = time.monotonic()
        if alive is not None:
            if alive():
                gone_since = None
            elif gone_since is None:
                gone_since = now
            elif now - gone_since >= GONE_AFTER_S:
                return WaitEnd.GONE
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
    count: Callable[[], int], *, cancel: Cancellable, timeout_s: float
) -> WaitEnd:
    """Wait until something subscribes to a command topic (graph discovery takes time)."""
    return wait_until(lambda: count() > 0, cancel=cancel, deadline=time.monotonic() + timeout_s)


def wait_future(
    future: Any,
    *,
    cancel: Cancellable,
    deadline: float | Deadline,
    alive: Callable[[], bool] | None = None,
) -> WaitEnd:
    """Wait for an rclpy future completed by another executor thread."""
    return wait_until(future.done, cancel=cancel, deadline=deadline, alive=alive)


def wait_for_server(client: Any, *, cancel: Cancellable, seconds: float) -> WaitEnd:
    """Wait for an action client's server to appear: DONE, CANCELED (a cancel ends the
    wait at once, unlike rclpy's `wait_for_server`) or TIMEOUT."""
    return wait_until(client.server_is_ready, cancel=cancel, deadline=time.monotonic() + seconds)


def run_action(
    client: Any,
    goal: Any,
    *,
    server: str,
    kind: str,
    cancel: Cancellable,
    server_s: float,
    motion_s: float | Deadline,
    feedback: Callable[[Any], None] | None = None,
    watch_server: bool = False,
    hint: str = "is its controller running?",
) -> tuple[MotionResult, Any]:
    """Send one goal and wait for its result, with timeouts and cancel.

    Returns the outcome and the action's result message (None when there is none).
    `motion_s` is seconds or a `Deadline`, started once the server is there. Works
    with rclpy's ActionClient and with any object of the same shape. With
    `watch_server`, a server that goes away mid-goal (its node died) ends the wait
    after `GONE_AFTER_S`, rather than at the deadline. A cancel ends every wait, the wait
    for the server to appear included.
    """
    found = wait_for_server(client, cancel=cancel, seconds=server_s)
    if found is WaitEnd.CANCELED:
        return MotionResult.canceled(f"canceled while waiting for {server}"), None
    if found is not WaitEnd.DONE:
        return MotionResult.failure(
            f"{kind} action server {server} not available within {server_s:g} s ({hint})"
        ), None
    deadline = motion_s if isinstance(motion_s, Deadline) else Deadline(motion_s)
    alive = client.server_is_ready if watch_server else None
    send_future = client.send_goal_async(goal, feedback_callback=feedback)
    end = wait_future(send_future, cancel=cancel, deadline=deadline, alive=alive)
    if end is WaitEnd.GONE:
        return MotionResult.failure(f"{server} went away before accepting the goal"), None
    if end is not WaitEnd.DONE:
        # A goal accepted after we gave up must not move the robot on its own.
        send_future.add_done_callback(_cancel_when_accepted)
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled(f"canceled before {server} accepted the goal"), None
        return MotionResult.failure(f"{server} did not answer the goal {deadline.describe()}"), None
    handle = send_future.result()
    if handle is None or not handle.accepted:
        return MotionResult.failure(f"{server} rejected the {kind} goal"), None
    result_future = handle.get_result_async()
    end = wait_future(result_future, cancel=cancel, deadline=deadline, alive=alive)
    if end is WaitEnd.GONE:
        return MotionResult.failure(f"{server} went away mid-goal (its node died?)"), None
    if end is not WaitEnd.DONE:
        handle.cancel_goal_async()
        # Give the server a moment to confirm the stop; the result is not needed.
        wait_future(result_future, cancel=threading.Event(), deadline=time.monotonic() + 2.0)
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled(f"{kind} goal canceled on {server}"), None
        return MotionResult.failure(
            f"{server} did not finish {deadline.describe()}; goal canceled"
        ), None
    wrapped = result_future.result()
    status, result = wrapped.status, wrapped.result
    if status == GoalStatus.STATUS_SUCCEEDED:
        return MotionResult.success(f"{server} succeeded"), result
    if status == GoalStatus.STATUS_CANCELED:
        return MotionResult.canceled(f"{server} canceled the {kind} goal"), result
    return MotionResult.failure(f"{server} aborted the {kind} goal (status {status})"), result


def _cancel_when_accepted(future: Any) -> None:
    handle = future.result()
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()


def call_service(
    client: Any,
    request: Any,
    *,
    timeout_s: float,
    what: str,
    cancel: Cancellable,
) -> Any:
    """Call a service and wait for its answer (from a callback of a multi-threaded
    executor, whose other threads deliver it); never hang.

    A service that is not there, does not answer by the deadline, or goes away mid-call
    (its node died) ends in a CowpError naming it; a cancel ends the wait at once with
    `RunCancelledError`, the wait for the service to appear included, and the pending
    request is dropped either way.
    """
    found = wait_until(
        client.service_is_ready,
        cancel=cancel,
        deadline=time.monotonic() + min(10.0, timeout_s),
    )
    if found is WaitEnd.CANCELED:
        raise RunCancelledError(f"canceled while waiting for {client.srv_name} ({what})")
    if found is not WaitEnd.DONE:
        raise CowpError(
            f"{what}: service {client.srv_name} is not available",
            hint="is its node running? (`cowp bringup` reports nodes that died)",
        )
    future = client.call_async(request)
    end = wait_future(
        future,
        cancel=cancel,
        deadline=time.monotonic() + timeout_s,
        alive=client.service_is_ready,
    )
    if end is not WaitEnd.DONE:
        client.remove_pending_request(future)
    if end is WaitEnd.CANCELED:
        raise RunCancelledError(f"canceled while waiting for {what}")
    if end is WaitEnd.TIMEOUT:
        raise CowpError(f"{what}: no answer from {client.srv_name} within {timeout_s:.0f} s")
    if end is WaitEnd.GONE:
        raise CowpError(f"{what}: {client.srv_name} went away mid-call (its node died?)")
    response = future.result()
    if response is None:
        raise CowpError(f"{what}: {client.srv_name} returned nothing")
    return response
