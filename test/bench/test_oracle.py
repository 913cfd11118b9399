"""The oracle: the ceiling on one world, and on every (task, situation, step) pair."""

from __future__ import annotations

import pytest
from bench_fixtures import ANNOTATIONS, DATASET, fill_cup, situation

from cowp_ros.bench import methods as registry
from cowp_ros.bench.annotations import Effect, SituationEffect, load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.runner import Trial, run_one
from cowp_ros.bench.solvability import disagreements, pairs
from cowp_ros.planning import make_planner
from cowp_ros.tasks import get_task

ORACLE = registry.select(["oracle"])[0]
DATASET_TASKS = ("fill_cup", "clean_area", "set_table", "plate_to_sink", "pour_coke", "eat_burger")


def run(present: list[str], *events):  # type: ignore[no-untyped-def]
    spec, task, annotation = fill_cup(present)
    planner = make_planner("pyperplan")
    reference = tuple(planner.solve(task, 30.0).steps)
    trial = Trial("fill_cup", 0, 1, task, reference, tuple(events))
    return run_one(ORACLE, spec, trial, annotation, planner, None)


def test_the_oracle_replaces_a_dirty_cup_with_an_accepted_stand_in() -> None:
    record = run(
        ["cup_1", "faucet_1", "table_1", "pan_1", "bowl_1"],
        situation("the cup is dirty.", "hold_cup"),
    )
    assert record["completed"], record["episode"]
    assert record["episode"]["substitutions"] == ["bowl as cup"]  # never the pan
    assert record["situations"][0]["handled"]


def test_the_oracle_puts_a_broken_cup_down_before_taking_another() -> None:
    record = run(
        ["cup_1", "cup_2", "faucet_1", "table_1"], situation("the cup is broken.", "fill_cup")
    )
    assert record["completed"], record["episode"]
    assert any(step.startswith("(put_down cup_1") for step in record["episode"]["executed"])
    assert record["episode"]["substitutions"] == []  # cup_2 is a cup, nothing to judge


def test_the_oracle_gives_up_when_nothing_acceptable_is_present() -> None:
    record = run(
        ["cup_1", "faucet_1", "table_1", "pan_1"], situation("the cup is dirty.", "hold_cup")
    )
    assert not record["completed"]
    assert record["episode"]["gave_up"] == "oracle: no plan reaches the goal (unusable: cup_1)"


def test_the_oracle_keeps_its_plan_on_a_harmless_situation() -> None:
    none = SituationEffect(Effect.NO_EFFECT, (), "", "test")
    event = situation("the cup is not full.", "fill_cup", effect=none, blocking=False)
    record = run(["cup_1", "faucet_1", "table_1", "bowl_1"], event)
    assert record["completed"] and record["episode"]["changed_by_harmless"] == []
    assert record["situations"][0]["fired"] and not record["situations"][0]["handled"]


@pytest.mark.skipif(not (DATASET / "situations.json").is_file(), reason="no public dataset")
def test_every_pair_the_oracle_cannot_solve_is_declared_with_its_reason() -> None:
    # the whole house present, one situation at a time: "unsolvable" is a decision the
    # judge files write down (reason and why), never an accident of a domain
    dataset = SituationDataset.load(DATASET)
    annotations = load_annotations(ANNOTATIONS)
    planner = make_planner("pyperplan")
    found = []
    for name in DATASET_TASKS:
        found.extend(pairs(get_task(name), dataset, annotations[name], planner))
    wrong = disagreements(found)
    assert not wrong, "\n".join(p.line() for p in wrong)
    blocking = [p for p in found if p.blocking]
    unsolved = [p for p in blocking if not p.solved]
    assert len(blocking) > 100 and 0 < len(unsolved) < len(blocking) / 5
    assert {p.declared for p in unsolved} == {"beyond_skills", "no_stand_in"}
    for p in unsolved:
        assert annotations[p.task].unsolvable[p.index].why


def test_a_situation_passed_by_as_moot_counts_as_handled_when_the_trial_completes() -> None:
    record = run(
        ["cup_1", "cup_2", "faucet_1", "table_1"],
        situation("the cup is broken.", "hold_cup"),
        situation("the cup is cracked.", "fill_cup"),
    )
    assert record["completed"], record["episode"]
    first, second = record["situations"]
    assert first["fired"] and not first["passed"] and first["handled"]
    assert not second["fired"] and second["passed"] and second["handled"]
    assert second["how"] == "same_kind"
