"""An object stands in for a disabled one only where the task can use it (bench/usable.py).

Location comes from each task's own PDDL: plate_to_sink grasps a plate only from the
dining table, clean_area cleans the area beside its table, fill_cup serves at its
goal's table; set_table and the cup's kinds in fill_cup are found wherever they are.
"""

from __future__ import annotations

import pytest
from bench_fixtures import ANNOTATIONS, DATASET, FILL_CUP_PLAN

from cowp_ros.bench import methods as registry
from cowp_ros.bench.annotations import Effect, SituationEffect, load_annotation, load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.runner import BenchSettings, Trial, draw_trial, run_one
from cowp_ros.bench.schedule import ScheduledEvent
from cowp_ros.bench.simulator import TrialWorld
from cowp_ros.bench.usable import alternatives
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import get_task

CLEARING = (
    PlanStep("walk", ("room_1",)),
    PlanStep("walk_table", ("table_1", "room_1")),
    PlanStep("grasp_plate", ("plate_1", "table_1")),
    PlanStep("walk_sink", ("sink_1",)),
    PlanStep("place_plate", ("plate_1", "sink_1")),
)
OWN_PLATE_TO_SINK = ["plate_1", "table_1", "sink_1", "room_1"]


def broken(target: str, action: str, at: int) -> ScheduledEvent:
    effect = SituationEffect(Effect.DISABLES, (target,), "", "test")
    return ScheduledEvent(
        "situation", "0/1", f"the {target} is broken.", action, at, effect, target, True,
        (target,),
    )  # fmt: skip


def stand_ins_for(task: str, present: list[str], event: ScheduledEvent, reference):  # type: ignore[no-untyped-def]
    spec = get_task(task)
    problem = keep_objects(spec.load_house(), present)
    annotation = load_annotation(ANNOTATIONS / f"{task}.yaml")
    return alternatives(event, problem, reference, annotation, spec.release_actions)


def test_a_plate_that_is_not_on_the_dining_table_is_no_spare() -> None:
    # plate_3 is in the house but not on the table the robot clears: it cannot be grasped
    # there, so "the plate is broken" has nothing to handle it with
    event = broken("plate_1", "grasp_plate", 2)
    assert stand_ins_for("plate_to_sink", [*OWN_PLATE_TO_SINK, "plate_3"], event, CLEARING) is None
    # plate_2 is on the dining table: it is the spare, and plate_3 beside it still is not
    both = [*OWN_PLATE_TO_SINK, "plate_2", "plate_3"]
    assert stand_ins_for("plate_to_sink", both, event, CLEARING) == ("plate_2",)


def test_a_dish_on_the_dining_table_is_not_the_plate_put_away() -> None:
    # the mug and the bowl are on the table, where the task can reach them, but the
    # plate's role takes no other kind: a mug in the sink is not the plate cleared
    event = broken("plate_1", "walk_sink", 3)
    present = [*OWN_PLATE_TO_SINK, "mug_1", "bowl_1"]
    assert stand_ins_for("plate_to_sink", present, event, CLEARING) is None


def test_a_mug_in_the_sink_is_not_the_broken_plate_put_away() -> None:
    # plate_to_sink's goal is tied to the plate: the domain's `(dishes_cleared)` is met by
    # any dish placed in a sink, and the judge takes no other kind in the plate's role,
    # so the goal is reached and the trial does not complete
    spec = get_task("plate_to_sink")
    task = keep_objects(spec.load_house(), [*OWN_PLATE_TO_SINK, "mug_1"])
    annotation = load_annotation(ANNOTATIONS / "plate_to_sink.yaml")
    w = TrialWorld(spec, task, (broken("plate_1", "grasp_plate", 2),), annotation, max_attempts=20)
    assert all(w.execute(step).executed for step in CLEARING[:2])
    assert w.execute(CLEARING[2]).situation == "the plate_1 is broken."
    mug = [PlanStep(s.action, tuple("mug_1" if a == "plate_1" else a for a in s.args))
           for s in CLEARING[2:]]  # fmt: skip
    assert all(w.execute(step).executed for step in mug)
    assert w.record.goal_reached and not w.record.completed
    assert w.record.harmful == [
        "(grasp_plate mug_1 table_1): a mug as the plate",
        "(place_plate mug_1 sink_1): a mug as the plate",
    ]


def test_the_plate_broken_in_the_hand_is_put_down_before_the_spare_is_taken() -> None:
    # raised on the way to the sink, the robot holds the broken plate: a release step
    # frees the hand, so the spare on the table still counts
    event = broken("plate_1", "walk_sink", 3)
    present = [*OWN_PLATE_TO_SINK, "plate_2"]
    assert stand_ins_for("plate_to_sink", present, event, CLEARING) == ("plate_2",)


VACUUMING = (
    PlanStep("find_table", ("table_1",)),
    PlanStep("grasp_vacuum", ("vacuum_1",)),
    PlanStep("plug_vacuum", ("vacuum_1", "outlet_1")),
    PlanStep("turnon_vacuum", ("vacuum_1",)),
    PlanStep("clean_area", ("vacuum_1", "area_1", "table_1")),
)
OWN_CLEAN_AREA = ["vacuum_1", "outlet_1", "table_1", "area_1"]


def test_only_the_table_beside_the_dirty_area_says_where_to_clean() -> None:
    event = broken("table_1", "find_table", 0)
    present = [*OWN_CLEAN_AREA, "table_2", "desk_1"]
    assert stand_ins_for("clean_area", present, event, VACUUMING) is None


def test_a_broom_sweeps_for_a_broken_vacuum_though_it_is_never_plugged_in() -> None:
    # the judge accepts the broom to grasp and sweep only; the domain lets a manual
    # cleaner sweep, so it can take the vacuum's role where the task uses it
    event = broken("vacuum_1", "grasp_vacuum", 1)
    present = [*OWN_CLEAN_AREA, "broom_1", "pan_1"]
    assert stand_ins_for("clean_area", present, event, VACUUMING) == ("broom_1",)


OWN_FILL_CUP = ["cup_1", "faucet_1", "table_1"]


def test_the_water_is_served_at_the_goals_table_and_a_cup_is_found_anywhere() -> None:
    table = broken("table_1", "place_cup", 5)
    assert stand_ins_for("fill_cup", [*OWN_FILL_CUP, "table_2"], table, FILL_CUP_PLAN) is None
    cup = broken("cup_1", "fill_cup", 4)
    present = [*OWN_FILL_CUP, "glass_1", "cup_3", "pan_1"]
    assert stand_ins_for("fill_cup", present, cup, FILL_CUP_PLAN) == ("cup_3", "glass_1")


def test_a_desk_sets_the_table_where_no_place_is_tied_to_the_goal() -> None:
    setting = (
        PlanStep("find_cupboard", ("cupboard_1",)),
        PlanStep("walk", ("cupboard_1",)),
        PlanStep("open_cupboard", ("cupboard_1",)),
        PlanStep("find_plate", ("plate_1", "cupboard_1")),
        PlanStep("takeout_plate", ("plate_1", "cupboard_1")),
        PlanStep("find_table", ("table_1",)),
    )
    event = broken("table_1", "find_table", 5)
    present = ["plate_1", "fork_1", "cupboard_1", "table_1", "desk_1", "counter_1"]
    assert stand_ins_for("set_table", present, event, setting) == ("desk_1",)


ORACLE = registry.select(["oracle"])[0]


@pytest.mark.skipif(not (DATASET / "situations.json").is_file(), reason="no public dataset")
def test_the_oracle_handles_a_situation_alone_exactly_when_a_usable_object_is_present() -> None:
    # on drawn test trials, each blocking situation that disables objects is run alone:
    # the ceiling finds a plan exactly where the draw says a usable object is present, so
    # the location rule neither drops an object the oracle uses nor keeps one it cannot
    dataset = SituationDataset.load(DATASET)
    annotations = load_annotations(ANNOTATIONS)
    planner = make_planner("pyperplan")
    settings = BenchSettings(dataset=str(DATASET), p=0.5, seed=0)
    checked = {True: 0, False: 0}
    for name in ("plate_to_sink", "pour_coke", "eat_burger", "clean_area"):
        spec = get_task(name)
        for index in range(6):
            trial = draw_trial(spec, index, settings, dataset, annotations[name], planner)
            for event in trial.events:
                effect = event.effect
                if not event.blocking or effect is None or effect.effect is not Effect.DISABLES:
                    continue
                alone = Trial(name, index, trial.seed, trial.problem, trial.reference, (event,),
                              trial.cast)  # fmt: skip
                record = run_one(ORACLE, spec, alone, annotations[name], planner, None)
                assert record["completed"] == event.alternative, (trial.name, event.text)
                checked[event.alternative] += 1
    assert checked[True] > 5 and checked[False] > 0, checked
