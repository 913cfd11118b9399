"""Turns at one model (`llm.turns`): a decision goes before the questions asked ahead,
which resume afterwards, or are dropped once cancelled or replaced; no answer is lost or
asked twice. The model here holds its first question until the test lets it go, so every
test checks an order, never a duration."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence

from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.language_model import Example, Usage, YesNo
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.llm.turns import Background, Decisive, DroppedError, ModelTurns
from cowp_ros.methods.grounded.situation_monitor import (
    NEED,
    STATE,
    TASK_STATE,
    USE,
    GroundedMonitor,
    RoleNeeds,
    RoleStates,
)
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import get_task

WAIT_S = 30.0
"""How long a test waits for another thread to get somewhere (it gets there in
milliseconds; the bound only ends a broken test)."""


class HeldModel:
    """A scripted model whose first question waits until `release` is set: the question
    in flight while a decision comes. `asked` is every question, in the order asked."""

    def __init__(self, scripted: ScriptedModel) -> None:
        self.scripted = scripted
        self.asked: list[str] = []
        self.in_flight = threading.Event()
        self.release = threading.Event()

    @property
    def name(self) -> str:
        return self.scripted.name

    @property
    def usage(self) -> Usage:
        return self.scripted.usage

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        self.asked.append(question)
        if len(self.asked) == 1:
            self.in_flight.set()
            assert self.release.wait(WAIT_S), "the held question was never let go"
        return self.scripted.ask_yes_no(question, system=system, examples=examples)


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.005)


def run(target: Callable[[], object], failures: list[BaseException]) -> threading.Thread:
    def guarded() -> None:
        try:
            target()
        except BaseException as err:  # the test reads it
            failures.append(err)

    thread = threading.Thread(target=guarded, daemon=True)
    thread.start()
    return thread


def decide(turns: ModelTurns, model: HeldModel, questions: Sequence[str]) -> Callable[[], None]:
    def asking() -> None:
        with turns.decision():
            for question in questions:
                model.ask_yes_no(question)

    return asking


def test_a_decision_goes_before_the_questions_asked_ahead_that_wait() -> None:
    turns = ModelTurns()
    model = HeldModel(ScriptedModel())
    ahead = Background(model, turns)
    failures: list[BaseException] = []
    early = run(lambda: [ahead.ask_yes_no(f"ahead {i}") for i in (1, 2, 3)], failures)
    assert model.in_flight.wait(WAIT_S)
    decision = run(decide(turns, model, ["decision 1", "decision 2"]), failures)
    until(lambda: turns.waiting_decisions == 1, "the decision waits for the model")
    model.release.set()
    for thread in (early, decision):
        thread.join(WAIT_S)
    assert not failures
    # The question in flight ends; the decision's questions come next, together; the
    # questions asked ahead resume afterwards, none lost.
    assert model.asked == ["ahead 1", "decision 1", "decision 2", "ahead 2", "ahead 3"]
    assert ahead.spent.calls == 3 and model.usage.calls == 5


def test_a_decision_takes_the_model_only_for_its_questions() -> None:
    """Under way, it keeps the questions asked ahead out; it waits for the question in
    flight only once it has a question of its own (grounding alone waits for none)."""
    turns = ModelTurns()
    model = HeldModel(ScriptedModel())
    ahead = Background(model, turns)
    failures: list[BaseException] = []
    early = run(lambda: [ahead.ask_yes_no(f"ahead {i}") for i in (1, 2)], failures)
    assert model.in_flight.wait(WAIT_S)
    with turns.claim():  # this thread's decision is under way, the first question held
        decided = Decisive(model, turns)
        model.release.set()
        decided.ask_yes_no("decision 1")
        decided.ask_yes_no("decision 2")  # nothing asked ahead between its questions
    early.join(WAIT_S)
    assert not failures
    assert model.asked == ["ahead 1", "decision 1", "decision 2", "ahead 2"]
    assert decided.spent.calls == 2 and ahead.spent.calls == 2


def test_questions_asked_ahead_drop_once_newer_ones_replace_them() -> None:
    turns = ModelTurns()
    model = HeldModel(ScriptedModel())
    ahead = Background(model, turns, still_wanted=turns.replace_background())
    failures: list[BaseException] = []
    early = run(lambda: [ahead.ask_yes_no(f"ahead {i}") for i in (1, 2, 3)], failures)
    assert model.in_flight.wait(WAIT_S)
    decision = run(decide(turns, model, ["decision"]), failures)
    until(lambda: turns.waiting_decisions == 1, "the decision waits for the model")
    newer = turns.replace_background()  # a new plan's questions replace the old ones
    model.release.set()
    for thread in (early, decision):
        thread.join(WAIT_S)
    assert model.asked == ["ahead 1", "decision"]  # the question in flight was answered
    assert [type(f) for f in failures] == [DroppedError]
    assert newer() and ahead.spent.calls == 1


def test_a_cancel_drops_the_questions_asked_ahead_at_their_next_question() -> None:
    turns = ModelTurns()
    model = HeldModel(ScriptedModel())
    cancel = CancelToken()
    ahead = Background(model, turns, still_wanted=lambda: not cancel.is_set())
    failures: list[BaseException] = []
    early = run(lambda: [ahead.ask_yes_no(f"ahead {i}") for i in (1, 2)], failures)
    assert model.in_flight.wait(WAIT_S)
    cancel.cancel()
    model.release.set()
    early.join(WAIT_S)
    assert model.asked == ["ahead 1"]  # the question in flight answered, the next dropped
    assert [type(f) for f in failures] == [DroppedError]


def test_in_arrival_order_a_decision_waits_for_work_held_in_one_turn() -> None:
    """`ordered=False`, the order before decisions went first (the node then holds its
    questions asked ahead in one turn): what a benchmark compares against."""
    turns = ModelTurns(ordered=False)
    model = HeldModel(ScriptedModel())
    failures: list[BaseException] = []
    early = run(decide(turns, model, ["ahead 1", "ahead 2"]), failures)
    assert model.in_flight.wait(WAIT_S)
    decision = run(decide(turns, model, ["decision"]), failures)
    until(lambda: turns.waiting_decisions == 2, "the decision waits for the model")
    model.release.set()
    for thread in (early, decision):
        thread.join(WAIT_S)
    assert not failures and model.asked == ["ahead 1", "ahead 2", "decision"]


FILL_PLAN = [
    PlanStep("find_faucet", ("faucet_1",)),
    PlanStep("turnon_faucet", ("faucet_1",)),
    PlanStep("find_cup", ("cup_1",)),
    PlanStep("hold_cup", ("cup_1",)),
    PlanStep("fill_cup", ("cup_1", "faucet_1")),
    PlanStep("place_cup", ("cup_1", "table_1")),
]
ABOUT_THE_CUP = r"(Is|must) the cup"
FILL_ANSWERS = [
    (r"use the cup", True),  # a stained cup can still be used ...
    (r"^Task: [^.]*\. Is the (cup|faucet|table) dirty\?$", False),  # the task calls none dirty
    (r"Is the cup dirty\?", True),  # ... but it is dirty
    (r"must the (cup|faucet) be clean", True),
    (r"must the table be clean", False),
]


def test_a_decision_during_the_plans_questions_reuses_them_and_none_is_asked_twice() -> None:
    """The plan's questions are being asked when "the cup has coffee stains" comes: the
    decision asks the cup's clean need itself, at once, and the plan's questions then
    skip the cup; every question is asked once, every role's need is kept once."""
    spec = get_task("fill_cup")
    task = spec.load()
    turns = ModelTurns()
    model = HeldModel(ScriptedModel(yes_no=FILL_ANSWERS))
    needs: RoleNeeds = {}
    stated: RoleStates = {}

    def monitor(over: object) -> GroundedMonitor:
        # One monitor per request over the same kept answers, as the commonsense node has.
        return GroundedMonitor(over, "filling a cup", needs=needs, stated=stated)  # type: ignore[arg-type]

    failures: list[BaseException] = []
    prepared: list[object] = []
    ahead = run(
        lambda: prepared.extend(monitor(Background(model, turns)).prepare(FILL_PLAN, task)),
        failures,
    )
    assert model.in_flight.wait(WAIT_S)
    checks: list[object] = []

    def situation() -> None:
        with turns.decision():
            seen = Situation("the cup has coffee stains", "cup_1")
            checks.append(monitor(model).check(FILL_PLAN, seen, task))

    decision = run(situation, failures)
    until(lambda: turns.waiting_decisions == 1, "the decision waits for the model")
    model.release.set()
    for thread in (ahead, decision):
        thread.join(WAIT_S)
    assert not failures
    assert len(model.asked) == len(set(model.asked)) == 8, model.asked
    (check,) = checks
    assert check.blocked is not None and "cup_1" in check.blocked.args  # type: ignore[attr-defined]
    decided = [v.variant for v in check.verdicts]  # type: ignore[attr-defined]
    assert decided == [USE, STATE, TASK_STATE, NEED]
    # Its four questions came right after the one in flight, before the plan's others.
    assert model.asked[1:5] == [v.question for v in check.verdicts]  # type: ignore[attr-defined]
    asked_ahead = [v.question for v in prepared]  # type: ignore[attr-defined]
    assert len(asked_ahead) == 4 and not any(re.search(ABOUT_THE_CUP, q) for q in asked_ahead)
    assert sorted(role for _, role in needs) == ["the cup", "the faucet", "the table"]
