"""The symbolic world: what a step needs, what situations do, how the judge rates a plan."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bench_fixtures import (
    ANNOTATIONS,
    FILL_CUP_PLAN,
    PRESENT,
    disables,
    fill_cup,
    situation,
    world,
)

from cowp_ros.bench.annotations import Effect, Harm, SituationEffect, load_annotation
from cowp_ros.bench.simulator import ScheduledEvent, TrialWorld
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import get_task

PLAN = list(FILL_CUP_PLAN)
WITH_BOWL = [
    PlanStep("find_cup__cup_as_bowl", ("bowl_1",)),
    PlanStep("hold_cup__cup_as_bowl", ("bowl_1",)),
    PlanStep("fill_cup__cup_as_bowl", ("bowl_1", "faucet_1")),
    PlanStep("place_cup__cup_as_bowl", ("bowl_1", "table_1")),
]
PUT_DOWN_CUP = PlanStep("put_down", ("cup_1", "table_1"))


def run(w, steps):  # type: ignore[no-untyped-def]
    return [w.execute(s) for s in steps]


def test_the_closed_world_plan_reaches_the_goal_without_situations() -> None:
    w = world()
    outcomes = run(w, PLAN)
    assert all(o.executed for o in outcomes)
    assert w.finished and w.record.goal_reached and w.record.completed
    assert w.record.executed == [str(s) for s in PLAN]


def test_a_step_whose_preconditions_fail_is_not_done() -> None:
    w = world()
    outcome = w.execute(PlanStep("fill_cup", ("cup_1", "faucet_1")))
    assert not outcome.executed and outcome.situation is None
    assert "precondition" in w.record.failed[0]
    assert not w.finished


def test_a_situation_is_seen_before_its_step_once_and_disables_its_object() -> None:
    w = world(situation("the cup is dirty.", "hold_cup"))
    run(w, PLAN[:3])
    seen = w.execute(PLAN[3])
    assert not seen.executed and seen.situation == "the cup is dirty."
    again = w.execute(PLAN[3])
    assert not again.executed and again.situation is None
    assert "cup_1 is unusable: the cup is dirty" in w.record.failed[-1]
    assert [f["text"] for f in w.record.fired] == ["the cup is dirty."]


def test_a_situation_blocks_only_the_steps_that_use_its_object() -> None:
    # "the cup is missing" raised before finding the faucet: finding the faucet goes on
    w = world(situation("the cup is missing.", "find_faucet"))
    assert w.execute(PLAN[0]).situation == "the cup is missing."
    assert w.execute(PLAN[0]).executed and w.execute(PLAN[1]).executed
    assert not w.execute(PLAN[2]).executed  # finding the cup is what it stops


def test_a_held_object_that_goes_bad_can_be_put_down_and_replaced() -> None:
    w = world(situation("the cup is broken.", "fill_cup"))
    run(w, PLAN[:4])
    assert w.execute(PLAN[4]).situation == "the cup is broken."
    assert w.execute(WITH_BOWL[0]).executed  # finding a bowl: the hand is not needed
    assert not w.execute(WITH_BOWL[1]).executed  # the hand still holds the broken cup
    assert w.execute(PUT_DOWN_CUP).executed  # a release step may use the unusable cup
    assert all(o.executed for o in run(w, WITH_BOWL[1:]))
    assert w.record.completed and w.record.harmful == []


def test_an_accepted_stand_in_completes_the_task_once_a_situation_called_for_it() -> None:
    w = world(situation("the cup is dirty.", "hold_cup"))
    run(w, PLAN[:3])
    w.execute(PLAN[3])
    assert all(o.executed for o in run(w, WITH_BOWL))
    assert w.record.completed
    assert w.record.substitutions == ["bowl as cup"]
    assert any(
        "bowl as cup in fill_cup: acceptable by stand_ins.cup" in j for j in w.record.judgements
    )


def test_a_stand_in_nobody_needed_is_a_harmful_step() -> None:
    w = world()  # no situation: the cup is fine, swapping it for a bowl is not asked for
    run(w, PLAN[:2])
    assert all(o.executed for o in run(w, WITH_BOWL))
    assert w.record.goal_reached and not w.record.completed
    assert "no situation made the cup unusable" in w.record.harmful[0]


def test_an_unacceptable_stand_in_reaches_the_goal_but_does_not_complete() -> None:
    w = world(situation("the cup is dirty.", "find_faucet"))
    pan = [
        PlanStep(s.action, tuple("pan_1" if a == "bowl_1" else a for a in s.args))
        for s in WITH_BOWL
    ]
    w.execute(PLAN[0])
    run(w, PLAN[:2])
    assert all(o.executed for o in run(w, pan))
    assert w.record.goal_reached and not w.record.completed
    assert "a pan as the cup" in w.record.harmful[0]


def test_stand_ins_are_judged_per_action(tmp_path: Path) -> None:
    # a bowl accepted to be found, held and filled, but not to be served as the cup
    judge = tmp_path / "fill_cup.yaml"
    judge.write_text(
        "task: fill_cup\ndataset_id: 4\nstand_ins: {cup: {bowl: [find_cup, hold_cup, fill_cup]}}\n"
    )
    spec, task, _ = fill_cup()
    w = TrialWorld(
        spec,
        task,
        (situation("the cup is dirty.", "find_cup"),),
        load_annotation(judge),
        max_attempts=40,
    )
    run(w, PLAN[:3])
    assert all(o.executed for o in run(w, WITH_BOWL))
    assert w.record.goal_reached and not w.record.completed
    assert w.record.harmful == ["(place_cup__cup_as_bowl bowl_1 table_1): a bowl as the cup"]


def test_a_second_object_of_the_same_kind_is_never_judged() -> None:
    w = world(present=["cup_1", "cup_2", "faucet_1", "table_1"])
    run(w, PLAN[:2])
    second = [
        PlanStep(s.action, tuple("cup_2" if a == "cup_1" else a for a in s.args)) for s in PLAN[2:]
    ]
    assert all(o.executed for o in run(w, second))
    assert w.record.completed and w.record.substitutions == []


def test_an_object_of_another_kind_of_thing_cannot_take_a_role() -> None:
    w = world()
    outcome = w.execute(PlanStep("find_cup", ("table_1",)))
    assert not outcome.executed
    assert "cannot be used as a cup" in w.record.failed[0]


def test_a_situation_beyond_the_robots_skills_blocks_its_action_for_every_object() -> None:
    beyond = SituationEffect(Effect.BEYOND_SKILLS, (), "no water", "test")
    w = world(situation("the water is hot.", "fill_cup", effect=beyond))
    run(w, PLAN[:4])
    assert w.execute(PLAN[4]).situation == "the water is hot."
    assert not w.execute(PLAN[4]).executed
    run(w, [PlanStep("place_cup", ("cup_1", "table_1"))])
    assert not w.record.goal_reached


def test_a_situation_disabling_several_objects_blocks_each() -> None:
    # dirty water noticed when the cup is already full: the faucet and the cup's water
    w = world(situation("the water is dirty.", "place_cup", effect=disables("faucet_1", "cup_1")))
    run(w, PLAN[:5])
    assert w.execute(PLAN[5]).situation == "the water is dirty."
    assert not w.execute(PLAN[5]).executed
    assert set(w.disabled) == {"faucet_1", "cup_1"}


def harmless(text: str, action: str) -> ScheduledEvent:
    none = SituationEffect(Effect.NO_EFFECT, (), "", "test")
    return situation(text, action, effect=none, blocking=False)


def test_a_harmless_situation_changes_nothing_and_a_kept_plan_is_no_change() -> None:
    w = world(harmless("the cup is not full.", "fill_cup"))
    outcomes = [*run(w, PLAN[:4]), w.execute(PLAN[4]), *run(w, PLAN[4:])]
    assert outcomes[4].situation is not None
    assert w.record.completed and w.record.changed_by_harmless == []


def distractor(action: str) -> ScheduledEvent:
    return ScheduledEvent("distractor", "d/0", "the cup is blue.", action, 0)


def test_a_plan_change_or_giving_up_after_a_harmless_event_is_a_change() -> None:
    changed = world(distractor("find_cup"))
    run(changed, PLAN[:2])
    changed.execute(PLAN[2])
    changed.execute(WITH_BOWL[0])
    assert changed.record.changed_by_harmless == [
        {
            "key": "d/0",
            "text": "the cup is blue.",
            "how": f"the next step was {WITH_BOWL[0]}, not {PLAN[2]}",
        }
    ]
    gave_up = world(harmless("the cup is not full.", "fill_cup"))
    run(gave_up, PLAN[:4])
    gave_up.execute(PLAN[4])
    gave_up.give_up("no solution")
    assert "gave up" in gave_up.record.changed_by_harmless[0]["how"]


def test_the_view_shows_the_robot_what_it_saw_and_did() -> None:
    w = world(situation("the cup is dirty.", "hold_cup"))
    view = w.view()
    run(view, PLAN[:4])
    assert view.situations == ("the cup is dirty.",)
    assert [s for s, _ in view.history] == PLAN[:4]
    assert view.history[-1][1].situation == "the cup is dirty."
    assert view.scene() == sorted(w.problem.problem_object_names)
    view.give_up("no stand-in")
    assert view.finished and w.record.gave_up == "no stand-in"


def test_attempts_are_bounded() -> None:
    w = world(max_attempts=3)
    for _ in range(4):
        w.execute(PlanStep("fill_cup", ("cup_1", "faucet_1")))
    assert w.finished and w.record.exhausted and not w.record.completed


# ---- silent and visible harm (bench v3) ------------------------------------------------


def silently(*targets: str) -> SituationEffect:
    return SituationEffect(Effect.DISABLES, tuple(targets), "", "test", harm=Harm.SILENT)


def test_a_silent_harm_lets_the_step_succeed_and_fails_the_trial() -> None:
    w = world(situation("the cup is dirty.", "find_cup", effect=silently("cup_1")))
    run(w, PLAN[:2])
    assert w.execute(PLAN[2]).situation == "the cup is dirty."
    outcomes = run(w, PLAN[2:])
    assert all(o.executed for o in outcomes)  # nothing the robot could see went wrong
    assert w.record.goal_reached and not w.record.completed
    # finding the dirty cup harms nothing; holding, filling and serving it do
    assert [h.split(":")[0] for h in w.record.silent_harms] == [
        "(hold_cup cup_1)", "(fill_cup cup_1 faucet_1)", "(place_cup cup_1 table_1)"
    ]  # fmt: skip
    assert all("the cup is dirty." in h for h in w.record.harmful)


def test_a_visible_harm_fails_the_step_even_a_perception_step() -> None:
    w = world(situation("the cup is broken.", "find_cup"))
    run(w, PLAN[:2])
    assert w.execute(PLAN[2]).situation == "the cup is broken."
    assert not w.execute(PLAN[2]).executed
    assert not w.record.silent_harms


def test_a_visible_effect_on_an_object_outweighs_a_silent_one() -> None:
    dirty = situation("the cup is dirty.", "find_cup", effect=silently("cup_1"))
    broken = replace(situation("the cup is broken.", "hold_cup"), key="4/0")
    w = world(dirty, broken)
    run(w, PLAN[:3])
    assert w.execute(PLAN[3]).situation == "the cup is broken."
    assert not w.execute(PLAN[3]).executed and "cup_1 is unusable" in w.record.failed[-1]


def test_beyond_skills_stops_its_own_action_not_the_step_it_was_noticed_at() -> None:
    hot = SituationEffect(Effect.BEYOND_SKILLS, (), "", "test", harm=Harm.SILENT, action="fill_cup")
    w = world(situation("the water is hot.", "find_cup", effect=hot))
    run(w, PLAN[:2])
    assert w.execute(PLAN[2]).situation == "the water is hot."
    assert all(o.executed for o in run(w, PLAN[2:]))  # every cup can still be found
    assert w.record.goal_reached and not w.record.completed
    assert [h.split(":")[0] for h in w.record.silent_harms] == ["(fill_cup cup_1 faucet_1)"]


def test_how_a_handled_situation_was_handled() -> None:
    broken = situation("the cup is broken.", "hold_cup")
    w = world(broken, present=[*PRESENT, "cup_2"])
    run(w, PLAN[:3])
    w.execute(PLAN[3])  # raised
    swap = [
        PlanStep("find_cup", ("cup_2",)),
        PlanStep("hold_cup", ("cup_2",)),
        PlanStep("fill_cup", ("cup_2", "faucet_1")),
        PlanStep("place_cup", ("cup_2", "table_1")),
    ]
    run(w, swap)
    assert w.record.completed and w.how_handled(broken) == "same_kind"
    w = world(broken)
    run(w, PLAN[:3])
    w.execute(PLAN[3])
    run(w, WITH_BOWL)
    assert w.record.completed and w.how_handled(broken) == "stand_in"
    assert world(broken).how_handled(broken) == ""  # never raised


def test_a_step_that_fails_on_a_raised_situation_is_remembered_as_run_into() -> None:
    broken = situation("the cup is broken.", "hold_cup")
    dirty = replace(situation("the cup is dirty.", "find_cup", effect=silently("cup_1")), key="4/0")
    present = [*PRESENT, "cup_2"]
    swap = [
        PlanStep("find_cup", ("cup_2",)),
        PlanStep("hold_cup", ("cup_2",)),
        PlanStep("fill_cup", ("cup_2", "faucet_1")),
        PlanStep("place_cup", ("cup_2", "table_1")),
    ]
    understood = world(broken, present=present)
    run(understood, PLAN[:3])
    understood.execute(PLAN[3])  # raised, and the robot swaps cups at once
    run(understood, swap)
    assert understood.record.completed and understood.record.ran_into == []
    ignored = world(broken, dirty, present=present)
    run(ignored, PLAN[:3])
    assert ignored.execute(PLAN[3]).situation == "the cup is broken."
    assert not ignored.execute(PLAN[3]).executed  # went on as if it meant nothing
    assert not ignored.execute(PLAN[3]).executed  # a second failure is counted once
    run(ignored, swap)
    assert ignored.record.completed and ignored.record.ran_into == [broken.key]
    # a step that fails for a precondition blames no situation
    w = world(broken)
    w.execute(PlanStep("fill_cup", ("cup_1", "faucet_1")))
    assert w.record.failed and w.record.ran_into == []


def test_a_broom_sweeps_the_area_once_a_power_outage_stops_the_vacuum() -> None:
    spec = get_task("clean_area")
    task = keep_objects(spec.load_house(), ["vacuum_1", "outlet_1", "table_1", "area_1", "broom_1"])
    annotation = load_annotation(ANNOTATIONS / "clean_area.yaml")
    outage = ScheduledEvent(
        "situation", "1/0", "there is a power outage.", "turnon_vacuum", 0,
        SituationEffect(Effect.BEYOND_SKILLS, (), "", "situations.0"), "power", True,
    )  # fmt: skip
    sweep = [
        PlanStep("put_down", ("vacuum_1", "table_1")),
        PlanStep("grasp_vacuum", ("broom_1",)),
        PlanStep("sweep_area", ("broom_1", "area_1", "table_1")),
    ]
    start = [
        PlanStep("find_table", ("table_1",)),
        PlanStep("grasp_vacuum", ("vacuum_1",)),
        PlanStep("plug_vacuum", ("vacuum_1", "outlet_1")),
    ]
    w = TrialWorld(spec, task, (outage,), annotation, max_attempts=20)
    run(w, start)
    assert w.execute(PlanStep("turnon_vacuum", ("vacuum_1",))).situation
    assert all(o.executed for o in run(w, sweep))
    assert w.record.completed and w.how_handled(outage) == "stand_in"
    # without an outage the broom is a stand-in nobody needed
    w = TrialWorld(spec, task, (), annotation, max_attempts=20)
    run(w, [*start[:1], *sweep[1:]])
    assert w.record.goal_reached and not w.record.completed


def test_any_sink_takes_the_plate_when_the_kitchen_sink_is_full() -> None:
    spec = get_task("plate_to_sink")
    task = keep_objects(spec.load_house(), ["plate_1", "table_1", "sink_1", "sink_2", "room_1"])
    annotation = load_annotation(ANNOTATIONS / "plate_to_sink.yaml")
    full = ScheduledEvent(
        "situation", "9/0", "the sink is full.", "walk_sink", 0,
        SituationEffect(Effect.DISABLES, ("sink_1",), "", "default object"), "sink", True,
        ("sink_1",),
    )  # fmt: skip
    w = TrialWorld(spec, task, (full,), annotation, max_attempts=20)
    steps = [
        PlanStep("walk", ("room_1",)),
        PlanStep("walk_table", ("table_1", "room_1")),
        PlanStep("grasp_plate", ("plate_1", "table_1")),
    ]
    assert all(o.executed for o in run(w, steps))
    assert w.execute(PlanStep("walk_sink", ("sink_1",))).situation == "the sink is full."
    assert not w.execute(PlanStep("walk_sink", ("sink_1",))).executed
    run(w, [PlanStep("walk_sink", ("sink_2",)), PlanStep("place_plate", ("plate_1", "sink_2"))])
    assert w.record.completed and w.how_handled(full) == "same_kind"


CUP_2 = [
    PlanStep("find_cup", ("cup_2",)),
    PlanStep("hold_cup", ("cup_2",)),
    PlanStep("fill_cup", ("cup_2", "faucet_1")),
    PlanStep("place_cup", ("cup_2", "table_1")),
]


def test_a_situation_about_an_object_already_given_up_on_is_passed_by() -> None:
    # "the cup is broken" made the robot take cup_2; "the cup is cracked", due at filling,
    # is about cup_1: the robot filling cup_2 is not told it, and it counts as got past
    broken = situation("the cup is broken.", "hold_cup")
    cracked = situation("the cup is cracked.", "fill_cup")
    w = world(broken, cracked, present=[*PRESENT, "cup_2"])
    run(w, PLAN[:3])
    assert w.execute(PLAN[3]).situation == "the cup is broken."
    assert all(o.executed and o.situation is None for o in run(w, CUP_2))
    assert w.record.completed
    assert [f["text"] for f in w.record.fired] == ["the cup is broken."]
    assert w.passed(cracked.key) and not w.passed(broken.key)
    assert w.how_handled(cracked) == "same_kind"


def test_a_stand_in_in_the_roles_of_an_object_given_up_on_passes_its_situation_by() -> None:
    broken = situation("the cup is broken.", "hold_cup")
    cracked = situation("the cup is cracked.", "fill_cup")
    w = world(broken, cracked)
    run(w, PLAN[:3])
    w.execute(PLAN[3])
    assert all(o.executed for o in run(w, WITH_BOWL))
    assert w.passed(cracked.key) and w.how_handled(cracked) == "stand_in"


def test_a_situation_about_an_object_still_usable_is_raised_whatever_object_is_used() -> None:
    # no dodging: a plan that prefers cup_2 from the start is still told about the cup
    cracked = situation("the cup is cracked.", "fill_cup")
    w = world(cracked, present=[*PRESENT, "cup_2"])
    run(w, [PLAN[0], PLAN[1], *CUP_2[:2]])
    assert w.execute(CUP_2[2]).situation == "the cup is cracked."
    assert not w.passed(cracked.key)


def test_a_passed_situation_is_raised_if_the_robot_comes_back_to_its_object() -> None:
    broken = situation("the cup is broken.", "find_cup")
    cracked = situation("the cup is cracked.", "fill_cup")
    w = world(broken, cracked, present=[*PRESENT, "cup_2"])
    run(w, PLAN[:2])
    w.execute(PLAN[2])  # raised: cup_1 is unusable
    run(w, CUP_2[:2])
    assert w.execute(CUP_2[2]).situation is None  # passed by
    assert w.execute(PLAN[4]).situation == "the cup is cracked."
    assert not w.passed(cracked.key)
