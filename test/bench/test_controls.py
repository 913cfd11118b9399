"""The no-model controls: what retrying alone handles, and what it never can."""

from __future__ import annotations

import pytest
from bench_fixtures import PRESENT, situation, world

from cowp_ros.bench import methods as registry
from cowp_ros.bench.annotations import Effect, Harm, SituationEffect
from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods.noun_only import named_objects
from cowp_ros.bench.methods.retry import every_object
from cowp_ros.bench.methods.same_kind import one_with_a_spare
from cowp_ros.bench.simulator import ScheduledEvent
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import get_task

BROKEN_CUP = situation("the cup is broken.", "hold_cup")
DIRTY_CUP = situation(
    "the cup is dirty.",
    "hold_cup",
    effect=SituationEffect(Effect.DISABLES, ("cup_1",), "", "test", harm=Harm.SILENT),
)
BROKEN_FAUCET = situation("the faucet is broken.", "fill_cup", target="faucet_1")
CONTROLS = ("retry", "same_kind")


def run(name: str, *events, present: list[str] | None = None):  # type: ignore[no-untyped-def]
    w = world(*events, present=present)
    context = MethodContext(get_task("fill_cup"), make_planner("pyperplan"), None, 0)
    method = registry.discover()[name](context)
    method.run(w.view())
    return w, method


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_needs_no_model_and_completes_a_quiet_trial(name: str) -> None:
    cls = registry.discover()[name]
    assert not cls.uses_llm
    w, _ = run(name)
    assert w.record.completed and not w.record.failed


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_swaps_in_a_second_cup_after_a_visible_failure(name: str) -> None:
    w, method = run(name, BROKEN_CUP, present=[*PRESENT, "cup_2"])
    assert w.record.completed, method.trace()
    assert w.how_handled(BROKEN_CUP) == "same_kind"
    assert any("cup_2" in step for step in w.record.executed)


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_never_uses_another_kind_of_object(name: str) -> None:
    w, _ = run(name, BROKEN_CUP)  # a bowl is present, no second cup
    assert not w.record.completed and w.record.gave_up
    assert not any("bowl" in step for step in w.record.executed)


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_does_the_silent_harm_it_cannot_see(name: str) -> None:
    w, _ = run(name, DIRTY_CUP, present=[*PRESENT, "cup_2"])
    assert w.record.goal_reached and not w.record.completed
    assert w.record.silent_harms and not w.record.failed


def test_same_kind_tries_one_object_at_a_time_and_retry_drops_them_all() -> None:
    task = world(present=[*PRESENT, "cup_2", "faucet_2"]).problem
    fill = PlanStep("fill_cup", ("cup_1", "faucet_1"))
    # the second cup first; once it is dropped, the faucet; nothing when no spare is left
    assert one_with_a_spare(task, fill, set()) == {"cup_1"}
    assert one_with_a_spare(task, fill, {"cup_1"}) == {"faucet_1"}
    assert one_with_a_spare(task, fill, {"cup_1", "faucet_1"}) == set()
    assert one_with_a_spare(world().problem, fill, set()) == set()  # no second cup or faucet
    assert every_object(task, fill, {"cup_1"}) == {"faucet_1"}
    assert every_object(task, fill, set()) == {"cup_1", "faucet_1"}


HARMLESS_CUP = situation(
    "the cup is already clean.",
    "hold_cup",
    effect=SituationEffect(Effect.NO_EFFECT, (), "", "test"),
    blocking=False,
)
DISTRACTOR = ScheduledEvent("distractor", "d/1", "a bird sings outside.", "hold_cup", 0)


@pytest.mark.parametrize("name", [*CONTROLS, "cw"])
def test_two_sentences_at_one_step_are_not_a_failed_step(name: str) -> None:
    """A distractor and then a situation before the same step are two sentences, not a
    step that failed: a control that ignores sentences attempts the step until it runs."""
    w, method = run(name, DISTRACTOR, HARMLESS_CUP, present=[*PRESENT, "cup_2"])
    assert len(w.record.fired) == 2, w.record.fired
    assert w.record.completed and not w.record.failed, method_trace(method)
    assert not w.record.changed_by_harmless
    assert not any("cup_2" in step for step in w.record.executed)


def method_trace(method: object) -> list[str]:
    trace = getattr(method, "trace", None)
    return list(trace()) if callable(trace) else []


# ---- the noun-only control -------------------------------------------------------------


def test_noun_only_drops_the_named_object_at_the_sentence_and_takes_another_of_its_kind() -> None:
    assert not registry.discover()["noun_only"].uses_llm
    for event in (BROKEN_CUP, DIRTY_CUP):  # visible or silent: it reads only "the cup"
        w, method = run("noun_only", event, present=[*PRESENT, "cup_2"])
        assert w.record.completed and not w.record.failed, method.trace()
        assert not w.record.silent_harms and w.how_handled(event) == "same_kind"
        assert "(hold_cup cup_2)" in w.record.executed


def test_noun_only_never_takes_another_kind_and_changes_harmless_trials() -> None:
    w, _ = run("noun_only", BROKEN_CUP)  # a bowl is present, no second cup
    assert not w.record.completed and not any("bowl" in s for s in w.record.executed)
    # what the sentence says does not matter to it: a clean cup is dropped as a broken one
    w, _ = run("noun_only", HARMLESS_CUP, present=[*PRESENT, "cup_2"])
    assert w.record.completed and w.record.changed_by_harmless
    # a sentence naming nothing the plan uses is ignored
    w, _ = run("noun_only", DISTRACTOR, present=[*PRESENT, "cup_2"])
    assert w.record.completed and not w.record.changed_by_harmless
    assert "(hold_cup cup_1)" in w.record.executed


def test_noun_only_reads_the_kind_nouns_of_the_remaining_plan() -> None:
    task = world(present=[*PRESENT, "cup_2"]).problem
    plan = [PlanStep("hold_cup", ("cup_1",)), PlanStep("fill_cup", ("cup_1", "faucet_1"))]
    assert named_objects(task, "The cups are broken.", plan, set()) == {"cup_1"}
    assert named_objects(task, "the faucet is leaking", plan, set()) == {"faucet_1"}
    assert named_objects(task, "the cupboard is open", plan, set()) == set()
    assert named_objects(task, "the cup is broken", plan, {"cup_1"}) == set()
