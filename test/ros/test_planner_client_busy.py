"""The task manager's planner client sends a request the planner node refused as busy
again until its deadline (a peer's slow requests delay a run, they do not fail it), and
a cancel ends that wait. In process: a Plan service that answers "busy" a given number
of times, and the client, on one executor."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.srv import Plan
from cowp_ros.cowp.cancel import CancelToken, RunCancelledError
from cowp_ros.planning import PlanStatus
from cowp_ros.planning.planner import PlannerError
from cowp_ros.ros.clients.planner_client import PlannerClient
from cowp_ros.ros.conversions import PLANNER_BUSY
from cowp_ros.ros.names import PLAN_SERVICE
from cowp_ros.tasks import get_task

pytestmark = pytest.mark.ros


class BusyPlanner:
    """A Plan service busy for its first `busy` requests, then planning "found"."""

    def __init__(self, node: Node, busy: int) -> None:
        self.busy = busy
        self.calls = 0
        node.create_service(Plan, PLAN_SERVICE, self.on_plan)

    def on_plan(self, request: Any, response: Any) -> Any:
        self.calls += 1
        response.planner = "busy test planner"
        if self.calls <= self.busy:
            response.success, response.status = False, "error"
            response.message = f"{PLANNER_BUSY}: 1 requests are being planned"
        else:
            response.success, response.status = True, "found"
        return response


@pytest.fixture
def graph() -> Iterator[tuple[Node, Node]]:
    context = rclpy.Context()
    rclpy.init(context=context)
    server, client = Node("busy_planner", context=context), Node("planner_user", context=context)
    executor = MultiThreadedExecutor(context=context)
    executor.add_node(server)
    executor.add_node(client)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        yield server, client
    finally:
        executor.shutdown()
        server.destroy_node()
        client.destroy_node()
        rclpy.shutdown(context=context)
        spinning.join(timeout=5.0)


def test_a_busy_planner_is_asked_again_until_it_plans(graph: tuple[Node, Node]) -> None:
    server, node = graph
    planner = BusyPlanner(server, busy=2)
    result = PlannerClient(node, timeout_margin_s=5.0).solve(get_task("fill_cup").load(), 10.0)
    assert result.status is PlanStatus.FOUND and result.planner == "busy test planner"
    assert planner.calls == 3


def test_a_planner_busy_past_the_deadline_fails_the_request_with_its_reason(
    graph: tuple[Node, Node],
) -> None:
    server, node = graph
    BusyPlanner(server, busy=10**6)
    with pytest.raises(PlannerError, match=PLANNER_BUSY):
        PlannerClient(node, timeout_margin_s=0.0).solve(get_task("fill_cup").load(), 1.0)


def test_a_cancel_ends_the_wait_for_a_busy_planner(graph: tuple[Node, Node]) -> None:
    server, node = graph
    planner = BusyPlanner(server, busy=10**6)
    cancel = CancelToken()
    client = PlannerClient(node, cancel=cancel, timeout_margin_s=60.0)
    threading.Timer(0.2, cancel.cancel).start()
    with pytest.raises(RunCancelledError):
        client.solve(get_task("fill_cup").load(), 60.0)
    assert planner.calls >= 1
