"""A TaskClient whose result request was lost still gets the result: once the server's
status says the goal ended and no answer came, it asks again. In process: a real
rclpy action server that drops the first result request it receives (what discovery
under load does to a new client's request), and the client in its own context."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rclpy.action import ActionServer
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.action import RunTask
from cowp_ros.cowp.driver import Outcome
from cowp_ros.ros.clients import task_client
from cowp_ros.ros.clients.task_client import TaskClient

pytestmark = pytest.mark.ros

ACTION = "/lost_result/run_task"


class DroppingServer(ActionServer):
    """rclpy's action server, deaf to the first `drop` result requests."""

    def __init__(self, *args: Any, drop: int, **kwargs: Any) -> None:
        self.drop = drop
        self.requests = 0
        super().__init__(*args, **kwargs)

    async def _execute_get_result_request(self, request_header_and_message: Any) -> None:
        self.requests += 1
        if self.requests <= self.drop:
            return  # lost on the way: no response will ever be sent for it
        await super()._execute_get_result_request(request_header_and_message)


@pytest.fixture
def server() -> Iterator[DroppingServer]:
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("lost_result_server", context=context)

    def execute(goal_handle: Any) -> Any:
        time.sleep(0.3)
        goal_handle.succeed()
        return RunTask.Result(success=True, outcome="completed", explanation="served water")

    made = DroppingServer(node, RunTask, ACTION, execute_callback=execute, drop=1)
    executor = MultiThreadedExecutor(context=context)
    executor.add_node(node)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        yield made
    finally:
        executor.shutdown(timeout_sec=2.0)
        spinning.join(5.0)
        made.destroy()
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_a_lost_result_request_is_asked_again_once_the_goal_ended(server) -> None:
    client = TaskClient(ACTION, node_name="lost_result_client")
    try:
        client.wait_until_ready(30)
        client.run_task("serve_water")
        started = time.monotonic()
        result = client.get_result(timeout_s=30)
        waited = time.monotonic() - started
    finally:
        client.close()
    assert result.delivered, result.explanation
    assert result.outcome is Outcome.COMPLETED and result.explanation == "served water"
    assert server.requests == 2  # the lost one, and the one asked again
    assert waited >= task_client.RESULT_REASK_S


def test_is_task_complete_asks_again_too(server) -> None:
    client = TaskClient(ACTION, node_name="lost_result_poller")
    try:
        client.wait_until_ready(30)
        client.run_task("serve_water")
        deadline = time.monotonic() + 30
        while not client.is_task_complete():
            assert time.monotonic() < deadline, "the result never came"
        result = client.get_result(timeout_s=1)
    finally:
        client.close()
    assert result.delivered and result.outcome is Outcome.COMPLETED
    assert server.requests == 2
