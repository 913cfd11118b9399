"""Waits for an action server end on cancel: a run (or a `cowp task send` Ctrl-C) canceled
while the executor or the task manager is still starting stops at once, not after the
wait."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from cowp_ros.cowp.cancel import CancelToken, RunCancelledError
from cowp_ros.errors import CowpError
from cowp_ros.planning import PlanStep
from cowp_ros.ros import graph_robot
from cowp_ros.ros.graph_robot import GraphRobot

pytestmark = pytest.mark.ros

STEP = PlanStep("find_cup", ("cup_1",))


class NoExecutor:
    """An action client whose server never appears (the executor is not up)."""

    def __init__(self) -> None:
        self.asked = 0

    def server_is_ready(self) -> bool:
        self.asked += 1
        return False


def robot(client: NoExecutor) -> GraphRobot:
    presence = SimpleNamespace(refusal=lambda step: None)
    return GraphRobot(
        None,  # type: ignore[arg-type]  # no situations are taken here
        client,  # type: ignore[arg-type]
        5.0,
        clock=None,  # type: ignore[arg-type]
        presence=presence,  # type: ignore[arg-type]
    )


def test_a_cancel_ends_the_wait_for_the_executor() -> None:
    cancel = CancelToken()
    cancel.cancel("the user canceled")
    client = NoExecutor()
    started = time.monotonic()
    with pytest.raises(RunCancelledError, match="the user canceled"):
        robot(client).execute(STEP, "find the cup", cancel)
    assert time.monotonic() - started < graph_robot.EXECUTOR_WAIT_S / 2


def test_an_executor_that_never_appears_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_robot, "EXECUTOR_WAIT_S", 0.2)
    client = NoExecutor()
    with pytest.raises(CowpError, match="the executor is not serving"):
        robot(client).execute(STEP, "find the cup", CancelToken())
    assert client.asked >= 2  # it kept looking until the wait ran out


def test_the_task_clients_wait_for_the_task_manager_ends_on_cancel() -> None:
    from cowp_ros.ros.clients.task_client import TaskClient

    client = TaskClient(action_name=f"/nobody_{time.monotonic_ns()}/run_task")
    try:
        canceled = threading.Event()
        canceled.set()
        started = time.monotonic()
        assert client.wait_until_ready(60.0, cancel=canceled) is False
        assert time.monotonic() - started < 30.0
        with pytest.raises(CowpError, match="no RunTask action server"):
            client.wait_until_ready(0.2)
    finally:
        client.close()
