"""A TaskClient whose result request was lost still gets the result: once the server's
status says the goal ended and no answer came, it asks again; and when no answer ever
comes (a task manager that went away right after sending it), it reads the goal's
outcome from the outcomes topic. In process: a real rclpy action server that drops
result requests (what discovery under load does to a new client's request), and the
client in its own context."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rclpy.action import ActionServer

from cowp_interfaces.action import RunTask
from cowp_interfaces.msg import TaskOutcome
from cowp_ros.cowp.driver import Outcome
from cowp_ros.ros.clients import task_client
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.ros.names import TASK_OUTCOMES_TOPIC
from cowp_ros.ros.result_delivery import OUTCOMES_QOS, outcome_message

pytestmark = [
    pytest.mark.ros,
    # rclpy's own server logs the handshake (a goal it does not hold) with a deprecated call
    pytest.mark.filterwarnings("ignore:Deprecated in favor of:DeprecationWarning"),
]

ACTION = "/lost_result/run_task"


class DroppingServer(ActionServer):
    """rclpy's action server, deaf to the first `drop` result requests for a goal it
    holds (the client's handshake, about a goal nobody sent, is answered)."""

    def __init__(self, *args: Any, drop: int, **kwargs: Any) -> None:
        self.drop = drop
        self.requests = 0
        super().__init__(*args, **kwargs)

    async def _execute_get_result_request(self, request_header_and_message: Any) -> None:
        _header, request = request_header_and_message
        if bytes(request.goal_id.uuid) in self._goal_handles:
            self.requests += 1
            if self.requests <= self.drop:
                return  # lost on the way: no response will ever be sent for it
        await super()._execute_get_result_request(request_header_and_message)


def execute(goal_handle: Any) -> Any:
    time.sleep(0.3)
    goal_handle.succeed()
    return RunTask.Result(success=True, outcome="completed", explanation="served water")


@pytest.fixture
def server(run_task_server) -> DroppingServer:
    return run_task_server(DroppingServer, ACTION, execute, drop=1)


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


def test_a_result_never_answered_arrives_as_the_published_outcome(run_task_server) -> None:
    publishers: list[Any] = []

    def execute_and_publish(goal_handle: Any) -> Any:
        time.sleep(0.3)
        goal_handle.abort()
        result = RunTask.Result(
            success=False, outcome="aborted", explanation="aborted: shutting down"
        )
        goal_id = bytes(goal_handle.goal_id.uuid)
        publishers[0].publish(outcome_message(goal_id, goal_handle.status, result))
        return result

    deaf = run_task_server(
        DroppingServer, "/deaf_server/run_task", execute_and_publish, drop=1_000_000
    )
    publishers.append(deaf._node.create_publisher(TaskOutcome, TASK_OUTCOMES_TOPIC, OUTCOMES_QOS))
    client = TaskClient("/deaf_server/run_task", node_name="deaf_server_client")
    try:
        client.wait_until_ready(30)
        client.run_task("serve_water")
        result = client.get_result(timeout_s=30)
    finally:
        client.close()
    assert result.delivered, result.explanation
    assert result.outcome is Outcome.ABORTED
    assert result.explanation == "aborted: shutting down"
    assert deaf.requests >= 1 and not result.success  # every request went unanswered


def test_an_outcome_carries_every_field_of_the_result() -> None:
    from cowp_interfaces.msg import PlanStep
    from cowp_ros.ros.result_delivery import RESULT_FIELDS, result_of

    assert set(RESULT_FIELDS) == set(RunTask.Result.get_fields_and_field_types())
    result = RunTask.Result(
        success=True,
        outcome="completed",
        executed_steps=[PlanStep(action="find_cup", arguments=["cup_1"])],
        handled_situations=["the cup is dirty"],
        explanation="served water in a mug: the cup was dirty",
        report_path="/tmp/report.json",
    )
    message = outcome_message(bytes(range(16)), 4, result)
    assert bytes(message.goal_id) == bytes(range(16)) and message.status == 4
    assert result_of(message) == result
