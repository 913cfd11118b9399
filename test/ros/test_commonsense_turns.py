"""The commonsense node takes the model in turns: a situation that comes while a new
plan's questions are asked ahead is decided after the question in flight, before the
rest, which resume afterwards; each request counts only its own questions, and none is
asked twice. The node is made in process and its service callback called from two
threads, over a scripted server that holds the first question until the test lets it
go, so the test checks an order, never a duration."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import rclpy
from rclpy.parameter import Parameter

from cowp_interfaces.msg import PlanStep
from cowp_interfaces.srv import CheckPlan
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer
from cowp_ros.ros.nodes.commonsense import CommonsenseNode

pytestmark = pytest.mark.ros

WAIT_S = 30.0
"""How long the test waits for a thread to get somewhere (milliseconds, normally)."""

STEPS = [
    PlanStep(action="walk_to", arguments=["faucet_1"]),
    PlanStep(action="fill_water", arguments=["cup_1", "faucet_1"]),
    PlanStep(action="walk_to", arguments=["table_1"]),
    PlanStep(action="deliver_water", arguments=["cup_1", "table_1"]),
]


class HeldFirst:
    """Answers as `SensibleModel` does, the first question only once `release` is set;
    `asked` is every question in the order the server took them."""

    def __init__(self) -> None:
        self.answers = SensibleModel()
        self.asked: list[str] = []
        self.in_flight = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: Request) -> Reply | None:
        if request.is_chat:
            self.asked.append(request.last_user_text)
            if len(self.asked) == 1:
                self.in_flight.set()
                self.release.wait(WAIT_S)
        return self.answers(request)


@pytest.fixture
def node_over() -> Iterator[Callable[[str, bool], CommonsenseNode]]:
    """Makes a commonsense node on a server's URL, in a context of its own."""
    made: list[tuple[CommonsenseNode, rclpy.Context]] = []

    def make(url: str, decisions_first: bool) -> CommonsenseNode:
        context = rclpy.Context()
        rclpy.init(context=context)
        overrides = {
            "llm_url": url,
            "llm_model": "scripted",
            "method": "grounded",
            "answer_cache": False,
            "warm_prefix": False,
            "decisions_first": decisions_first,
        }
        node = CommonsenseNode(
            context=context,
            parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
        )
        made.append((node, context))
        return node

    yield make
    for node, context in reversed(made):
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def ask(node: CommonsenseNode, request: Any, answers: list[Any]) -> threading.Thread:
    thread = threading.Thread(
        target=lambda: answers.append(node.on_check_plan(request, CheckPlan.Response())),
        daemon=True,
    )
    thread.start()
    return thread


def plan_then_situation(node: CommonsenseNode, held: HeldFirst) -> tuple[Any, Any]:
    """The task manager's two requests: the new plan (asked ahead), then, while its
    first question is in flight, a situation about the cup. (ahead, decision)"""
    plan = CheckPlan.Request(task="serve_water", steps=STEPS)
    situation = CheckPlan.Request(
        task="serve_water",
        steps=STEPS,
        situation="the cup has coffee stains",
        situation_object="cup_1",
    )
    ahead: list[Any] = []
    decided: list[Any] = []
    first = ask(node, plan, ahead)
    assert held.in_flight.wait(WAIT_S), "the plan's first question never came"
    second = ask(node, situation, decided)
    # In arrival order the plan's questions are held as one request, under way too.
    under_way = 1 if node.turns.ordered else 2
    deadline = time.monotonic() + WAIT_S
    while node.turns.waiting_decisions != under_way:
        assert time.monotonic() < deadline, "the decision never waited for the model"
        time.sleep(0.005)
    held.release.set()
    for thread in (first, second):
        thread.join(WAIT_S)
    assert len(ahead) == len(decided) == 1
    assert ahead[0].success, ahead[0].message
    assert decided[0].success, decided[0].message
    return ahead[0], decided[0]


def test_a_situation_is_decided_before_the_plans_pending_questions(node_over) -> None:
    held = HeldFirst()
    with ScriptedLLMServer(held) as server:
        node = node_over(server.url, True)
        ahead, decision = plan_then_situation(node, held)
    decided, asked_ahead = list(decision.questions), list(ahead.questions)
    assert decided and not decision.feasible  # a dirty cup the task needs clean
    # The question in flight first, then the decision's, then the rest asked ahead.
    assert held.asked[0] == asked_ahead[0]
    assert held.asked[1 : 1 + len(decided)] == decided
    assert held.asked[1 + len(decided) :][: len(asked_ahead) - 1] == asked_ahead[1:]
    # Every question once; each request counts its own.
    questions = [*decided, *asked_ahead]
    assert len(set(questions)) == len(questions)
    assert decision.model_calls == len(decided) and ahead.model_calls == len(asked_ahead)
    assert len(held.asked) == len(questions) + 1  # and the task's words read again, last


def test_in_arrival_order_the_situation_waits_for_all_the_plans_questions(node_over) -> None:
    """`decisions_first: false`, the order before: what the benchmark compares against."""
    held = HeldFirst()
    with ScriptedLLMServer(held) as server:
        node = node_over(server.url, False)
        ahead, decision = plan_then_situation(node, held)
    decided = list(decision.questions)
    assert decided and held.asked[-len(decided) :] == decided
    assert held.asked[: len(ahead.questions)] == list(ahead.questions)


def test_a_request_past_the_requests_taken_at_once_is_refused_as_busy(node_over) -> None:
    """Waiting requests hold executor threads: past `MAX_REQUESTS` one is refused at once,
    so the parameter services keep threads of their own."""
    from cowp_ros.ros.nodes.commonsense import BUSY, MAX_REQUESTS

    held = HeldFirst()
    with ScriptedLLMServer(held) as server:
        node = node_over(server.url, True)
        plan = CheckPlan.Request(task="serve_water", steps=STEPS)
        remark = CheckPlan.Request(
            task="serve_water", steps=STEPS, situation="the cup has coffee stains"
        )
        answers: list[Any] = []
        threads = [ask(node, plan, answers)]
        assert held.in_flight.wait(WAIT_S)
        threads += [ask(node, remark, answers) for _ in range(MAX_REQUESTS - 1)]
        deadline = time.monotonic() + WAIT_S
        while node.turns.waiting_decisions != MAX_REQUESTS - 1:
            assert time.monotonic() < deadline, "the decisions never waited for the model"
            time.sleep(0.005)
        refused = node.on_check_plan(remark, CheckPlan.Response())
        held.release.set()
        for thread in threads:
            thread.join(WAIT_S)
    assert not refused.success and refused.message.startswith(BUSY)
    assert len(answers) == MAX_REQUESTS and all(a.success for a in answers)
