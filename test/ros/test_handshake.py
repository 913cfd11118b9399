"""The handshake before a first goal (`cowp_ros.ros.handshake`): a result request for a
goal nobody sent, asked again until the server answers. TaskClient.wait_until_ready
returns only once the task manager has answered, the task manager asks the executor the
same way before each step, and `cowp skill --run` before its step. In process: the
stack's own kind of action server (`ResultAwareActionServer`), deaf to the first
handshakes (what discovery under load does to a new client's request or answer); and
the loop alone, with nobody answering."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.executors import MultiThreadedExecutor
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

from cowp_interfaces.action import ExecuteSkill, RunTask
from cowp_ros.cowp.driver import Outcome
from cowp_ros.errors import CowpError
from cowp_ros.ros import handshake
from cowp_ros.ros.clients.skill_client import run_step_on_executor
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.ros.result_delivery import ResultAwareActionServer
from cowp_ros.ros.waiting import WaitEnd, wait_for_server

pytestmark = pytest.mark.ros

ACTION = "/handshake/run_task"


class DeafServer(ResultAwareActionServer):
    """The result-aware server, deaf to the first `deaf_to` result requests about goals
    it does not hold; counts them, and the answers it sent."""

    def __init__(self, *args: Any, deaf_to: int, **kwargs: Any) -> None:
        self.deaf_to = deaf_to
        self.unknown = 0
        super().__init__(*args, **kwargs)

    async def _execute_get_result_request(self, request_header_and_message: Any) -> None:
        _header, request = request_header_and_message
        if bytes(request.goal_id.uuid) not in self._goal_handles:
            self.unknown += 1
            if self.unknown <= self.deaf_to:
                return  # lost on the way: no answer will ever come for it
        await super()._execute_get_result_request(request_header_and_message)


def execute(goal_handle: Any) -> Any:
    goal_handle.succeed()
    return RunTask.Result(success=True, outcome="completed", explanation="served water")


@pytest.fixture
def hard_of_hearing(run_task_server) -> DeafServer:
    return run_task_server(DeafServer, ACTION, execute, deaf_to=2)


@pytest.fixture
def deaf(run_task_server) -> DeafServer:
    return run_task_server(DeafServer, ACTION, execute, deaf_to=10**6)


def test_ready_only_once_the_server_answered_and_the_task_then_runs(hard_of_hearing) -> None:
    client = TaskClient(ACTION, node_name="handshake_client")
    try:
        started = time.monotonic()
        assert client.wait_until_ready(30) is True
        waited = time.monotonic() - started
        client.run_task("serve_water")
        result = client.get_result(timeout_s=30)
    finally:
        client.close()
    assert hard_of_hearing.unknown == 3  # two lost handshakes, and the one answered
    assert waited >= 2 * handshake.REASK_S
    assert result.delivered and result.outcome is Outcome.COMPLETED


def test_the_handshake_is_answered_unknown_by_the_result_aware_server(hard_of_hearing) -> None:
    hard_of_hearing.deaf_to = 0
    client = TaskClient(ACTION, node_name="handshake_probe")
    try:
        assert client.wait_until_ready(30) is True
        handle = ClientGoalHandle(
            client.client, UUID(uuid=list(range(16))), RunTask.Impl.SendGoalService.Response()
        )
        answer = handle.get_result_async()
        deadline = time.monotonic() + 10.0
        while not answer.done() and time.monotonic() < deadline:
            client.executor.spin_once(timeout_sec=0.05)
        assert answer.done(), "the server never answered about a goal it does not hold"
    finally:
        client.close()
    assert answer.result().status == GoalStatus.STATUS_UNKNOWN


def test_a_server_that_never_answers_ends_the_wait_with_a_clear_error(deaf) -> None:
    client = TaskClient(ACTION, node_name="handshake_deaf")
    try:
        with pytest.raises(CowpError, match="is there but did not answer within 3 s"):
            client.wait_until_ready(3)
    finally:
        client.close()
    assert deaf.unknown >= 2  # asked again while waiting


def test_a_cancel_ends_the_handshake(deaf) -> None:
    client = TaskClient(ACTION, node_name="handshake_cancelled")
    cancel = threading.Event()
    threading.Timer(1.5, cancel.set).start()
    try:
        started = time.monotonic()
        assert client.wait_until_ready(30, cancel=cancel) is False
        assert time.monotonic() - started < 20.0  # the cancel, not the 30 s timeout
    finally:
        client.close()


def test_the_handshake_of_a_node_spun_on_another_thread(hard_of_hearing, lone_node) -> None:
    """As the task manager asks the executor: the answer completes on the executor's
    thread, the wait only watches it."""
    node = lone_node("handshake_threaded")
    client = ActionClient(node, RunTask, ACTION)
    executor = MultiThreadedExecutor(context=node.context)
    executor.add_node(node)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        cancel = threading.Event()
        assert wait_for_server(client, cancel=cancel, seconds=30) is WaitEnd.DONE
        started = time.monotonic()
        end = handshake.handshake(
            lambda: handshake.ask_about_no_goal(client, RunTask),
            handshake.threaded_wait(cancel),
            time.monotonic() + 30,
        )
        waited = time.monotonic() - started
    finally:
        executor.shutdown(timeout_sec=2.0)
        spinning.join(5.0)
        client.destroy()
    assert end is WaitEnd.DONE
    assert hard_of_hearing.unknown == 3 and waited >= 2 * handshake.REASK_S


class Unanswered:
    """Handshake requests nobody answers (no server needed): the futures asked, in order."""

    def __init__(self) -> None:
        self.asked: list[Future] = []

    def __call__(self) -> Future:
        self.asked.append(Future())
        return self.asked[-1]


@pytest.fixture
def unanswered(monkeypatch: pytest.MonkeyPatch) -> Unanswered:
    """Handshakes nobody answers, asked again every 50 ms."""
    monkeypatch.setattr(handshake, "REASK_S", 0.05)
    monkeypatch.setattr(handshake, "GONE_AFTER_S", 0.3)
    return Unanswered()


def test_a_server_that_went_away_ends_the_handshake_gone(unanswered) -> None:
    """A node that died looks present until its lease runs out, and answers nothing:
    the handshake ends GONE once the server has looked absent long enough, not at its
    deadline."""
    looks_present = iter([True, True, True])  # then absent for good
    started = time.monotonic()
    end = handshake.handshake(
        unanswered,
        handshake.threaded_wait(threading.Event()),
        time.monotonic() + 30,
        alive=lambda: next(looks_present, False),
    )
    assert end is WaitEnd.GONE
    assert time.monotonic() - started < 20  # the absence, not the 30 s deadline
    assert len(unanswered.asked) >= 3


def test_an_unanswered_handshake_ends_at_its_deadline(unanswered) -> None:
    started = time.monotonic()
    wait = handshake.threaded_wait(threading.Event())
    end = handshake.handshake(unanswered, wait, started + 0.5, alive=lambda: True)
    assert end is WaitEnd.TIMEOUT
    assert time.monotonic() - started >= 0.5 and len(unanswered.asked) >= 2


def test_a_cancel_ends_an_unanswered_handshake(unanswered) -> None:
    cancel = threading.Event()
    cancel.set()
    wait = handshake.threaded_wait(cancel)
    end = handshake.handshake(unanswered, wait, time.monotonic() + 30)
    assert end is WaitEnd.CANCELED and len(unanswered.asked) == 1


def do_the_step(goal_handle: Any) -> Any:
    goal_handle.succeed()
    return ExecuteSkill.Result(success=True, message="grasped cup_1")


def test_cowp_skill_run_sends_its_step_once_the_executor_answered(run_task_server) -> None:
    executor = run_task_server(
        DeafServer, "/handshake/execute_skill", do_the_step, ExecuteSkill, deaf_to=2
    )
    said: list[str] = []
    ok, message = run_step_on_executor(
        "/handshake/execute_skill",
        "grasp_cup",
        ["cup_1"],
        server_timeout_s=30,
        step_timeout_s=30,
        say=said.append,
    )
    assert (ok, message) == (True, "grasped cup_1")
    assert executor.unknown == 3  # two lost handshakes, and the one answered


def test_cowp_skill_run_names_an_executor_that_never_answers(run_task_server) -> None:
    run_task_server(
        DeafServer, "/handshake/deaf_executor", do_the_step, ExecuteSkill, deaf_to=10**6
    )
    with pytest.raises(CowpError, match="is there but did not answer within 3 s"):
        run_step_on_executor(
            "/handshake/deaf_executor",
            "grasp_cup",
            ["cup_1"],
            server_timeout_s=3,
            step_timeout_s=30,
            say=lambda line: None,
        )
