"""The planner node's `Plan` service as the loop's `Planner` port.

The task manager's loop plans its augmented domain and current state through this
client, so the planner runs in its own process (and can be swapped by a parameter)
while the loop is the same code as in `cowp run`. A request the node refuses because all
its slots are taken (another peer's slow requests) is sent again every `BUSY_RETRY_S`
until the request's own deadline, so a busy planner delays the run instead of failing it.
"""

from __future__ import annotations

import time
from typing import Any

from rclpy.client import Client
from rclpy.node import Node

from cowp_interfaces.srv import Plan
from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanResult
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.clients.phase_clock import PhaseClock
from cowp_ros.ros.conversions import plan_result_from_response, planner_busy
from cowp_ros.ros.names import PLAN_SERVICE
from cowp_ros.ros.waiting import call_service

BUSY_RETRY_S = 0.5
"""How long the client waits before asking a busy planner node again."""


class PlannerClient:
    """`Planner` over the planner node (PDDL text in, steps out)."""

    def __init__(
        self,
        node: Node,
        *,
        clock: PhaseClock | None = None,
        cancel: CancelToken = NEVER,
        timeout_margin_s: float = 30.0,
        clients: KeptClients | None = None,
    ) -> None:
        """`clients`: the node's kept clients (a long-lived node passes its own, see
        kept_clients.py); without them the client is this object's, destroyed by `close`."""
        self.node = node
        self._own_clients = clients is None
        self._clients = KeptClients(node) if clients is None else clients
        self.client: Client[Any, Any] = self._clients.get(Plan, PLAN_SERVICE)
        self.clock = clock
        self.cancel = cancel
        self.margin = timeout_margin_s
        self.name = "planner node"

    def close(self) -> None:
        if self._own_clients:
            self._clients.close()

    def solve(self, task: PlanningTask, timeout_s: float = 60.0) -> PlanResult:
        request = Plan.Request(
            domain_pddl=task.domain_text(), problem_pddl=task.problem_text(), timeout_s=timeout_s
        )
        started = time.monotonic()
        deadline = started + timeout_s + self.margin
        while True:
            response = call_service(
                self.client,
                request,
                timeout_s=max(1.0, deadline - time.monotonic()),
                what="planning",
                cancel=self.cancel,
            )
            again = min(deadline, time.monotonic() + BUSY_RETRY_S)
            if not planner_busy(response) or again >= deadline:
                break
            self.cancel.wait(again - time.monotonic())
            self.cancel.check()
        if self.clock is not None:
            self.clock.add("plan", time.monotonic() - started)
        result = plan_result_from_response(response, self.name)
        self.name = result.planner
        return result
