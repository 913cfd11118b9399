"""An action server that can say when a goal's result has gone out to its client.

rclpy sends a goal's result when both the execute callback has returned and the client
has asked for it (`get_result`), on the executor's threads, some time after the callback
returns. A node that is about to go (Ctrl-C during a task) must not destroy itself in
between, or the client waits for a result that never comes. `wait_result_sent` is the
synchronisation: it returns once the result went out to a client that asked for it,
or when the time is up (no client asked, or the result could not be sent), instead of
a guess of how long sending takes.

It also answers a result request for a goal it does not hold (STATUS_UNKNOWN) the way
it answers one for a goal it does: a send the middleware refuses is tried again, and
the request is not logged as a warning. That is the request a `TaskClient` sends as its
handshake before its first goal, so the answer must not be lost to discovery either.

"Sent" is not "received": a response the middleware took can still be lost when the
node is destroyed before the reader has it (a reliable writer resends until
acknowledged, but only while it exists), and a service has no acknowledgement to wait
for. So the task manager also publishes each goal's outcome (`TaskOutcome`) on a
reliable, transient-local topic, whose acknowledgements a node about to go can wait for
(`Publisher.wait_for_all_acked`); a `TaskClient` reads the outcome from whichever
arrives first.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer
from rclpy.action.server import ServerGoalHandle
from rclpy.duration import Duration
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future

from cowp_interfaces.action import RunTask
from cowp_interfaces.msg import TaskOutcome
from cowp_ros.ros.names import TASK_OUTCOMES_TOPIC

RCLError = rclpy_implementation.RCLError

KEPT_GOALS = 64
"""Goals whose "result sent" is remembered (the latest ones; a shutdown asks about one)."""

RESEND_FOR_S = 3.0
"""How long a result the middleware refused to send is tried again (the client's
response reader not matched yet); a shutdown waits for it within its grace."""

RESEND_EVERY_S = 0.1

OUTCOMES_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=8,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
"""The QoS of the outcomes topic, for its publisher and every reader: the latest goals'
outcomes, kept for a reader that comes late and resent until it acknowledged them."""


RESULT_FIELDS = (
    "success",
    "outcome",
    "executed_steps",
    "handled_situations",
    "explanation",
    "report_path",
)
"""The fields `TaskOutcome` shares with `RunTask.Result` (a test checks they are all)."""


def outcome_message(goal_id: bytes, status: int, result: RunTask.Result) -> TaskOutcome:
    """The `TaskOutcome` of goal `goal_id`, which ended with `status` and `result`."""
    fields = {name: getattr(result, name) for name in RESULT_FIELDS}
    return TaskOutcome(goal_id=list(goal_id), status=status, **fields)


def result_of(message: TaskOutcome) -> RunTask.Result:
    """The action result a `TaskOutcome` carries."""
    return RunTask.Result(**{name: getattr(message, name) for name in RESULT_FIELDS})


class OutcomePublisher:
    """Publishes how each goal ended on the outcomes topic, and says when every reader
    has it (for a node about to go)."""

    def __init__(self, node: Any) -> None:
        self._publisher = node.create_publisher(TaskOutcome, TASK_OUTCOMES_TOPIC, OUTCOMES_QOS)

    def publish(self, goal_handle: ServerGoalHandle, result: RunTask.Result) -> None:
        """Publish a goal's outcome, once its status is final."""
        goal_id = bytes(goal_handle.goal_id.uuid)
        self._publisher.publish(outcome_message(goal_id, goal_handle.status, result))

    def wait_acked(self, until: float) -> bool:
        """Wait until every reader acknowledged every outcome published; False when the
        monotonic time `until` came first."""
        left = Duration(seconds=max(0.0, until - time.monotonic()))
        return bool(self._publisher.wait_for_all_acked(left))


class ResultAwareActionServer(ActionServer):
    """`rclpy.action.ActionServer` that tells when each goal's result was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._sent: OrderedDict[bytes, threading.Event] = OrderedDict()
        self._sent_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def _sent_event(self, goal_id: bytes) -> threading.Event:
        with self._sent_lock:
            event = self._sent.get(goal_id)
            if event is None:
                event = self._sent[goal_id] = threading.Event()
                while len(self._sent) > KEPT_GOALS:
                    self._sent.popitem(last=False)
            return event

    def _send_result_response(self, request_header: Any, future: Future[Any]) -> None:
        """Send the result to a client that asked for it (a done callback of the goal's
        result future, as in rclpy), and mark the goal sent only once the middleware
        took it."""
        response = future.result()
        if not response:
            return
        if not self._send_until_taken(
            lambda: self._handle.send_result_response(request_header, response),
            "a goal's result",
        ):
            return
        for goal_id, result in list(self._result_futures.items()):
            if result is future:
                self._sent_event(goal_id).set()

    async def _execute_get_result_request(self, request_header_and_message: Any) -> None:
        """A result request: rclpy's handling for a goal this server holds; for any other
        goal (a client's handshake, or a goal long expired) the answer STATUS_UNKNOWN,
        sent as a result is (rclpy would log a warning, and lose the answer to a client
        it has not matched yet)."""
        request_header, request = request_header_and_message
        if bytes(request.goal_id.uuid) in self._goal_handles:
            await super()._execute_get_result_request(request_header_and_message)
            return
        self._logger.debug(
            f"result request for a goal not held here: {bytes(request.goal_id.uuid).hex()}"
        )
        response = self._action_type.Impl.GetResultService.Response()
        response.status = GoalStatus.STATUS_UNKNOWN
        self._send_until_taken(
            lambda: self._handle.send_result_response(request_header, response),
            "the status of a goal not held here",
        )

    def _send_until_taken(self, send: Callable[[], None], what: str) -> bool:
        """Send a response; True once the middleware took it.

        rclpy's own sending logs a failure and goes on. The failure that matters is the
        middleware's refusal to answer a client whose response reader the server has
        not matched yet (Fast DDS's rmw waits 100 ms for it, then drops the response):
        under load, a client's request can arrive before that. So a refused send is
        tried again for `RESEND_FOR_S`; a client that went away meanwhile is answered at
        once by the middleware (nothing to send to).
        """
        deadline = time.monotonic() + RESEND_FOR_S
        while True:
            try:
                with self._lock:
                    send()
                return True
            except RCLError as err:
                if time.monotonic() >= deadline:
                    self._logger.warning(
                        f"could not send {what} to its client for {RESEND_FOR_S:g} s: {err}"
                    )
                    return False
                time.sleep(RESEND_EVERY_S)

    def wait_result_sent(self, goal_id: bytes, timeout_s: float) -> bool:
        """Wait until the result of goal `goal_id` went out to a client that asked for
        it; False when `timeout_s` passed first."""
        return self._sent_event(goal_id).wait(max(0.0, timeout_s))
