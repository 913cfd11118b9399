"""An action server that can say when a goal's result has gone out to its client.

rclpy sends a goal's result when both the execute callback has returned and the client
has asked for it (`get_result`), on the executor's threads, some time after the callback
returns. A node that is about to go (Ctrl-C during a task) must not destroy itself in
between, or the client waits for a result that never comes. `wait_result_sent` is the
synchronisation: it returns once the result went out to a client that asked for it,
or when the time is up (no client asked), instead of a guess of how long sending takes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from rclpy.action import ActionServer
from rclpy.task import Future

KEPT_GOALS = 64
"""Goals whose "result sent" is remembered (the latest ones; a shutdown asks about one)."""


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
        """rclpy's own sending (a done callback of the goal's result future), then the
        goal is marked sent: its client has the result, or is gone."""
        try:
            super()._send_result_response(request_header, future)
        finally:
            for goal_id, result in list(self._result_futures.items()):
                if result is future:
                    self._sent_event(goal_id).set()

    def wait_result_sent(self, goal_id: bytes, timeout_s: float) -> bool:
        """Wait until the result of goal `goal_id` went out to a client that asked for
        it; False when `timeout_s` passed first."""
        return self._sent_event(goal_id).wait(max(0.0, timeout_s))
