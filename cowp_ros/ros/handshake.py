"""A handshake before an action client's first goal: has the server found this client?

Discovery is two-sided. `ActionClient.server_is_ready()` says that the client has found
the server; the server may not yet have found the client, and a server that has not
drops its answers to it (Fast DDS's rmw waits 100 ms for the client's reader to match,
then gives up). A lost result can be asked for again; a lost goal acceptance cannot: the
goal runs on the server while the client waits for an answer that never comes, and
sending the goal again would be a second goal.

So before a goal the client asks, as a handshake, for the result of a goal nobody sent:
every action server (rclpy's, rclcpp's) answers that at once with STATUS_UNKNOWN, and
once an answer has come the server has found the client. An answer lost to discovery is
not sent again, so the request is asked again every `REASK_S` until one comes. The
servers of this stack (`ResultAwareActionServer`) answer it without a warning and send
the answer again when the middleware refuses it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from rclpy.action.client import ClientGoalHandle
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from cowp_ros.ros.own_node import OwnNode
from cowp_ros.ros.waiting import GONE_AFTER_S, Cancellable, WaitEnd, wait_for_server, wait_future

REASK_S = 1.0
"""How long the handshake waits for an answer before asking again: a server that has
found the client answers within milliseconds."""

AnswerWait = Callable[[Future[Any], float], WaitEnd]
"""Waits for a future until a monotonic time: DONE, TIMEOUT, or CANCELED/GONE."""

Ask = Callable[[], Future[Any]]
"""Sends one handshake request; its answer's future."""


def nobody_goal_id() -> UUID:
    """A goal id nobody sent (fresh and random)."""
    return UUID(uuid=list(uuid.uuid4().bytes))


def ask_about_no_goal(client: Any, action_type: Any) -> Future[Any]:
    """Send an action client's result request for a goal nobody sent."""
    no_goal = action_type.Impl.SendGoalService.Response()
    return ClientGoalHandle(client, nobody_goal_id(), no_goal).get_result_async()


def handshake(
    ask: Ask,
    wait: AnswerWait,
    deadline: float,
    alive: Callable[[], bool] | None = None,
) -> WaitEnd:
    """Ask (`ask_about_no_goal`, or another request the server answers harmlessly)
    until the server answers (DONE), asking again every `REASK_S`; TIMEOUT at
    `deadline`, GONE once `alive()` has said no for `GONE_AFTER_S` (a server whose node
    died still looks present until its lease runs out, and answers nothing), or
    whatever else `wait` ended with (a cancel)."""
    gone_since: float | None = None
    while True:
        answer = ask()
        end = wait(answer, min(deadline, time.monotonic() + REASK_S))
        if end is not WaitEnd.TIMEOUT:
            return end
        now = time.monotonic()
        if alive is not None:
            gone_since = None if alive() else (gone_since or now)
            if gone_since is not None and now - gone_since >= GONE_AFTER_S:
                return WaitEnd.GONE
        if now >= deadline:
            return WaitEnd.TIMEOUT


def reach_server(
    client: Any, action_type: Any, wait: AnswerWait, cancel: Cancellable, seconds: float
) -> WaitEnd:
    """Wait, within `seconds` in all, for an action client's server to appear and then
    to answer its handshake: DONE once the server has found this client, so a goal sent
    now is not lost; CANCELED; GONE (it appeared, then went away); TIMEOUT, where
    `client.server_is_ready()` tells a server that never appeared from one that is
    there but does not answer."""
    deadline = time.monotonic() + seconds
    found = wait_for_server(client, cancel=cancel, seconds=seconds)
    if found is not WaitEnd.DONE:
        return found
    return handshake(
        lambda: ask_about_no_goal(client, action_type),
        wait,
        deadline,
        alive=client.server_is_ready,
    )


def threaded_wait(cancel: Cancellable) -> AnswerWait:
    """The wait for a node whose executor completes futures on another thread."""
    return lambda future, until: wait_future(future, cancel=cancel, deadline=until)


def spinning_wait(own: OwnNode, cancel: Cancellable | None = None) -> AnswerWait:
    """The wait for a node of its own (a client's, a command's), spun here until the
    answer comes."""

    def wait(future: Future[Any], until: float) -> WaitEnd:
        stop = cancel.is_set if cancel is not None else lambda: False
        own.spin_until(lambda: future.done() or stop(), max(0.0, until - time.monotonic()))
        if future.done():
            return WaitEnd.DONE
        return WaitEnd.CANCELED if stop() else WaitEnd.TIMEOUT

    return wait
