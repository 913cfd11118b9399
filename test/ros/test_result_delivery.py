"""A shutdown during a task delivers its result: the task manager goes only once the
result went out to the client, not after a guessed pause. In process: the task
manager and a RunTask client in one process, each on its own executor."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rclpy
from action_msgs.msg import GoalStatus
from rcl_interfaces.srv import GetParameters
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future

from cowp_interfaces.action import RunTask
from cowp_ros.ros import result_delivery
from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.nodes.task_manager import TaskManager
from cowp_ros.ros.result_delivery import RCLError, ResultAwareActionServer

pytestmark = [pytest.mark.ros, pytest.mark.filterwarnings("ignore:failed to send response")]

LATE_S = 1.0
"""How late the client asks for the result after the run ended (its request in flight)."""


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[tuple[TaskManager, Any, ActionClient]]:
    """A task manager whose runs wait for a world node that never answers (until they
    are canceled), a client node, and that world, each spinning on its own executor."""
    rclpy.init(
        args=[
            "--ros-args",
            "-p",
            "world_node:=silent_world",
            "-p",
            f"report_dir:={tmp_path / 'reports'}",
            "-p",
            "shutdown_grace_s:=20.0",
        ]
    )
    manager = TaskManager()
    server_executor = SteadyMultiThreadedExecutor()
    server_executor.add_node(manager)
    client_node = Node("result_delivery_client")
    client = ActionClient(client_node, RunTask, "/cowp/run_task")
    client_executor = SingleThreadedExecutor()
    client_executor.add_node(client_node)
    world_node = Node("silent_world_host")
    silence = threading.Event()

    def never_answer(request: Any, response: Any) -> Any:
        silence.wait(30.0)
        return response

    world_node.create_service(GetParameters, "/silent_world/get_parameters", never_answer)
    world_executor = SingleThreadedExecutor()
    world_executor.add_node(world_node)
    spinners = [
        threading.Thread(target=executor.spin, daemon=True)
        for executor in (server_executor, client_executor, world_executor)
    ]
    for spinner in spinners:
        spinner.start()
    try:
        yield manager, server_executor, client
    finally:
        silence.set()
        for executor in (world_executor, client_executor, server_executor):
            executor.shutdown(timeout_sec=2.0)
        for spinner in spinners:
            spinner.join(5.0)
        world_node.destroy_node()
        client.destroy()  # rclpy's destroy_node leaves action clients to the collector
        client_node.destroy_node()
        with contextlib.suppress(Exception):  # a test may have destroyed it already
            manager.destroy_node()
        rclpy.try_shutdown()


def wait_for(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_a_shutdown_goes_only_after_the_result_went_out(graph) -> None:
    """The client asks for the result a second after the run ended (as a request in
    flight on a busy network would): the node that shuts down must still answer it
    before it is destroyed, as `run_node` destroys it right after `on_shutdown`."""
    manager, server_executor, client = graph
    world = manager.create_client(GetParameters, "/silent_world/get_parameters")
    assert world.wait_for_service(timeout_sec=30.0)  # the run waits on its answer, not on discovery
    manager.destroy_client(world)
    assert client.wait_for_server(timeout_sec=30.0)
    sent = client.send_goal_async(RunTask.Goal(task="serve_water"))
    wait_for(sent.done, 30.0, "the goal to be accepted")
    goal_handle = sent.result()
    assert goal_handle.accepted
    wait_for(lambda: manager._active is not None, 30.0, "the run to start")
    run = manager._active

    shutdown = threading.Thread(target=manager.on_shutdown)
    shutdown.start()
    assert run.finished.wait(10.0), "the run did not end when the node shut down"
    time.sleep(LATE_S)  # the client's get_result request arrives late
    result = goal_handle.get_result_async()
    shutdown.join(30.0)
    assert not shutdown.is_alive()
    server_executor.shutdown(timeout_sec=2.0)  # what run_node does next
    manager.destroy_node()

    wait_for(result.done, 10.0, "the result (lost: the node went before it was sent)")
    answer = result.result().result
    assert answer.outcome == "aborted" and "shutting down" in answer.explanation
    assert answer.report_path and Path(answer.report_path).is_file()


class RefusingHandle:
    """rclpy's action server handle as the middleware acts while the client's response
    reader is not matched yet: the first `refusals` sends raise, then they go out."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.sent: list[Any] = []

    def send_result_response(self, _header: Any, response: Any) -> None:
        if self.refusals > 0:
            self.refusals -= 1
            raise RCLError("client will not receive response")
        self.sent.append(response)


@pytest.fixture
def bare_server() -> Iterator[ResultAwareActionServer]:
    """A result-aware server whose handle is swapped for a `RefusingHandle` by the test
    (nothing spins: the test calls the sending itself, as the executor would)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("result_resend", context=context)
    server = ResultAwareActionServer(
        node, RunTask, "/result_resend/run_task", execute_callback=lambda _goal: None
    )
    real = server._handle
    try:
        yield server
    finally:
        server._handle = real
        server._result_futures.clear()  # the test's own, never registered with rclpy
        server.destroy()
        node.destroy_node()
        rclpy.shutdown(context=context)


def finished_goal(server: ResultAwareActionServer) -> tuple[bytes, Future]:
    goal_id = bytes(range(16))
    future: Future = Future()
    future.set_result(RunTask.Impl.GetResultService.Response(status=GoalStatus.STATUS_ABORTED))
    server._result_futures[goal_id] = future
    return goal_id, future


def test_a_refused_result_is_sent_again_and_only_then_marked_sent(bare_server) -> None:
    handle = RefusingHandle(refusals=3)
    bare_server._handle = handle
    goal_id, future = finished_goal(bare_server)
    bare_server._send_result_response(object(), future)
    assert len(handle.sent) == 1 and handle.refusals == 0
    assert bare_server.wait_result_sent(goal_id, 0.0)


def test_a_result_never_taken_is_not_marked_sent(bare_server, monkeypatch) -> None:
    """A shutdown must not take "refused for RESEND_FOR_S" for "sent": it warns instead."""
    monkeypatch.setattr(result_delivery, "RESEND_FOR_S", 0.3)
    handle = RefusingHandle(refusals=1000)
    bare_server._handle = handle
    goal_id, future = finished_goal(bare_server)
    started = time.monotonic()
    bare_server._send_result_response(object(), future)
    assert 0.3 <= time.monotonic() - started < 2.0
    assert handle.sent == [] and not bare_server.wait_result_sent(goal_id, 0.0)


def test_a_refused_answer_about_a_goal_not_held_is_sent_again(bare_server) -> None:
    """A client's handshake asks about a goal nobody sent: the answer (STATUS_UNKNOWN)
    is sent again when refused, as a result is, and no goal is marked sent."""
    handle = RefusingHandle(refusals=2)
    bare_server._handle = handle
    request = RunTask.Impl.GetResultService.Request()
    request.goal_id.uuid = list(range(16, 32))
    asked = bare_server._execute_get_result_request((object(), request))
    with pytest.raises(StopIteration):
        asked.send(None)  # the coroutine runs to its end without waiting on anything
    assert handle.refusals == 0
    assert [r.status for r in handle.sent] == [GoalStatus.STATUS_UNKNOWN]
    assert not bare_server.wait_result_sent(bytes(range(16, 32)), 0.0)
