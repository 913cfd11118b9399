"""The no-model controls: what retrying alone handles, and what it never can."""

from __future__ import annotations

import pytest
from bench_fixtures import PRESENT, situation, world

from cowp_ros.bench import methods as registry
from cowp_ros.bench.annotations import Effect, Harm, SituationEffect
from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods.retry import every_object
from cowp_ros.bench.methods.same_kind import one_with_a_spare
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
