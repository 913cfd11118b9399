"""Our generated interfaces across a real process boundary: goal, feedback, result, cancel."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient

from cowp_interfaces.action import RunTask
from cowp_ros.ros.own_node import OwnNode

pytestmark = pytest.mark.ros

SERVER = Path(__file__).with_name("run_task_test_server.py")


def start_server(step_seconds: float) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(step_seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


class Client:
    """A RunTask client node in this (the test's) process."""

    def __init__(self) -> None:
        self.own = OwnNode("roundtrip_client")
        self.action = ActionClient(self.own.node, RunTask, "run_task")
        self.feedback: list[RunTask.Feedback] = []

    def wait(self, future, timeout_s: float = 20.0):
        assert self.own.spin_until(future.done, timeout_s, step_s=0.1), (
            f"no answer within {timeout_s} s"
        )
        return future.result()

    def send(self, task: str):
        assert self.action.wait_for_server(timeout_sec=20.0), "RunTask server not discovered"
        goal = RunTask.Goal(task=task)
        return self.wait(
            self.action.send_goal_async(
                goal, feedback_callback=lambda m: self.feedback.append(m.feedback)
            )
        )

    def close(self) -> None:
        self.own.close()


@pytest.fixture
def client() -> Iterator[Client]:
    made = Client()
    yield made
    made.close()


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def test_goal_feedback_and_result_cross_processes(client: Client) -> None:
    server = start_server(step_seconds=0.05)
    try:
        handle = client.send("serve_water")
        assert handle.accepted
        response = client.wait(handle.get_result_async())
    finally:
        stop(server)
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    result = response.result
    assert result.success and result.outcome == "completed"
    assert [s.action for s in result.executed_steps] == ["find_cup", "fill_cup", "place_cup"]
    assert list(result.executed_steps[1].arguments) == ["cup_1", "faucet_1"]
    assert list(result.handled_situations) == ["the cup is dirty"]
    assert result.explanation == "serve_water: done"
    phases = [f.phase for f in client.feedback]
    assert phases[0] == "planning" and phases.count("executing") == 3
    assert [f.step_index for f in client.feedback] == [-1, 0, 1, 2]
    assert client.feedback[0].last_event == "planned serve_water"


def test_empty_task_is_rejected(client: Client) -> None:
    server = start_server(step_seconds=0.0)
    try:
        handle = client.send("")
    finally:
        stop(server)
    assert not handle.accepted


def test_cancel_reaches_the_server_between_steps(client: Client) -> None:
    server = start_server(step_seconds=1.0)
    try:
        handle = client.send("serve_water")
        assert handle.accepted
        cancel = client.wait(handle.cancel_goal_async())
        assert len(cancel.goals_canceling) == 1
        response = client.wait(handle.get_result_async())
    finally:
        stop(server)
    assert response.status == GoalStatus.STATUS_CANCELED
    assert response.result.outcome == "canceled"
    assert len(response.result.executed_steps) < 3
