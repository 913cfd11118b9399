"""The task manager's side of asking a plan's needs ahead (`CommonsenseClient.prepare`):
it does not wait for the answer, keeps what was asked once it comes, and a node that
fails the request costs the run nothing. In process, against a stand-in CheckPlan
service (the real node's answer is tested in test/graph/test_services.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.srv import CheckPlan
from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.planning import PlanStep
from cowp_ros.ros.clients.commonsense_client import CommonsenseClient
from cowp_ros.ros.names import CHECK_PLAN_SERVICE
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

pytestmark = pytest.mark.ros

FAUCET, CUP = "Task: serving. Is the faucet dirty?", "Task: serving. Is the cup dirty?"
STEPS = [PlanStep("walk_to", ("faucet_1",)), PlanStep("fill_water", ("cup_1", "faucet_1"))]


@pytest.fixture
def spinning(lone_node: Callable[[str], Node]) -> Iterator[Callable[[str], Node]]:
    """Makes nodes that spin in the background, stopped before their contexts end."""
    executors: list[tuple[SingleThreadedExecutor, threading.Thread]] = []

    def make(name: str) -> Node:
        node = lone_node(name)
        executor = SingleThreadedExecutor(context=node.context)
        executor.add_node(node)
        thread = threading.Thread(target=executor.spin, daemon=True)
        thread.start()
        executors.append((executor, thread))
        return node

    yield make
    for executor, thread in executors:
        executor.shutdown()
        thread.join(5.0)


def prepare_against(
    spinning: Callable[[str], Node],
    answer: Callable[[Any, Any], Any],
    cancel: CancelToken = NEVER,
) -> tuple[CommonsenseClient, threading.Event, tuple[Any, ...]]:
    """A client asking a service that answers with `answer`; returns the client, an
    event set once the service answered, and what `prepare` returned."""
    served = threading.Event()

    def serve(request: Any, response: Any) -> Any:
        assert not request.situation and len(request.steps) == len(STEPS)
        answer(request, response)
        served.set()
        return response

    server = spinning("stand_in_commonsense")
    server.create_service(CheckPlan, CHECK_PLAN_SERVICE, serve)
    host = spinning("task_manager_side")
    spec = get_task("serve_water")
    client = CommonsenseClient(
        host,
        task_name=spec.name,
        description=spec.description,
        phrases=ActionPhrases(spec.phrases),
        cancel=cancel,
    )
    assert client.check_client.wait_for_service(timeout_sec=30.0)
    returned = client.prepare(STEPS, spec.load())
    return client, served, returned


def asked_two(request: Any, response: Any) -> None:
    response.success, response.feasible, response.failing_step = True, True, -1
    response.questions = [FAUCET, CUP]
    response.question_steps, response.answers = [0, 1], ["No", "No"]
    response.p_yes, response.unclear, response.cached = [0.1, 0.2], [False] * 2, [False] * 2
    response.model, response.model_calls, response.prompt_tokens = "stand-in", 2, 20


def test_what_the_node_asked_ahead_is_kept_when_it_answers(spinning) -> None:
    client, served, returned = prepare_against(spinning, asked_two)
    assert returned == ()  # it did not wait
    assert served.wait(30.0) and client.prepared.wait(30.0)  # taken in the executor's thread
    assert [v.question for v in client.asked_ahead] == [FAUCET, CUP]
    assert [v.step for v in client.asked_ahead] == STEPS
    assert client.usage.calls == 2 and client.model_name == "stand-in"
    assert client.calls["check"] == 1


def test_a_failed_answer_costs_nothing_but_a_warning(spinning) -> None:
    def refuse(request: Any, response: Any) -> None:
        response.success, response.message = False, "the model server is gone"

    client, served, returned = prepare_against(spinning, refuse)
    assert returned == () and served.wait(30.0) and client.prepared.wait(30.0)
    assert client.asked_ahead == [] and client.usage.calls == 0


def test_a_cancel_drops_what_the_node_asked_ahead(spinning) -> None:
    """The run was cancelled while the node asked: its answer is not the run's any more
    (what the model spent is still counted)."""
    cancel, answered = CancelToken(), threading.Event()

    def after_the_cancel(request: Any, response: Any) -> None:
        assert answered.wait(30.0)
        asked_two(request, response)

    client, served, _ = prepare_against(spinning, after_the_cancel, cancel)
    cancel.cancel()
    answered.set()
    assert served.wait(30.0) and client.prepared.wait(30.0)
    assert client.asked_ahead == [] and client.usage.calls == 2
    assert client.prepare(STEPS, get_task("serve_water").load()) == ()
    assert client.calls["check"] == 1  # a cancelled run sends no new plan
