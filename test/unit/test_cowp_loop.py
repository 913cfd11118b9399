"""Every branch of the open-world loop, driven step by step with a scripted model."""

from __future__ import annotations

import json

import pytest

from cowp_ros.cowp.loop import OpenWorldPlanner, Phase, Reaction
from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import Atom, PlanningTask, edits
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases

TINY_PHRASES = ActionPhrases(
    {"find_cup": "find {0}", "hold_cup": "hold {0}", "place_cup": "place {0} on {1}"}
)
DIRTY_CUP_BLOCKS_HOLDING = ("hold the cup, if the cup is dirty", False)


def tiny_loop(task: PlanningTask, model: ScriptedModel) -> OpenWorldPlanner:
    return build_loop(
        "cowp",
        task,
        model,
        make_planner("pyperplan"),
        phrases=TINY_PHRASES,
        description="serving a cup",
        task_name="tiny",
    )


def run_until(loop: OpenWorldPlanner, action: str) -> None:
    """Execute steps (all succeed) until the next one is `action`."""
    while (step := loop.next_step()) is not None and step.action != action:
        loop.step_done(True)


def asked(model: ScriptedModel, kind: str = "yes_no") -> list[str]:
    return model.questions(kind)


def kinds(loop: OpenWorldPlanner, kind: str) -> list[dict]:
    return [e.to_dict() for e in loop.report.of_kind(kind)]


def test_harmless_situation_keeps_the_plan(tiny: PlanningTask) -> None:
    model = ScriptedModel(default_yes_no=True)
    loop = tiny_loop(tiny, model)
    plan = loop.plan()
    assert [s.action for s in plan] == ["find_cup", "hold_cup", "place_cup"]
    run_until(loop, "hold_cup")
    assert loop.observe("the table is blue") is Reaction.FEASIBLE
    assert loop.remaining_steps == plan[1:]
    assert kinds(loop, "pddl_change") == []
    assert asked(model) == [
        "Is it suitable for a robot to hold the cup, if the table is blue?",
        "Is it suitable for a robot to place the cup on the table, if the table is blue?",
    ]
    run_until(loop, "none")
    assert loop.phase is Phase.COMPLETED
    assert loop.explanation() == "kept the plan: judged harmless: the table is blue"


def test_unsuitable_step_adds_a_precondition_and_replans(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[DIRTY_CUP_BLOCKS_HOLDING])
    loop = tiny_loop(edits.add_object(tiny, "cup_2", "cup"), model)
    loop.plan()
    run_until(loop, "hold_cup")
    (held,) = loop.next_step().args  # whichever cup the planner picked
    other = ({"cup_1", "cup_2"} - {held}).pop()
    assert loop.observe("The cup is dirty.") is Reaction.REPLANNED
    assert [str(s) for s in loop.remaining_steps] == [
        f"(find_cup {other})",
        f"(hold_cup {other})",
        f"(place_cup {other} table_1)",
    ]
    changes = [e["change"] for e in kinds(loop, "pddl_change")]
    assert changes == ["add_fact", "add_precondition"]
    assert "(not (is_dirty ?c))" in str(loop.task.action("hold_cup").precondition)
    assert Atom("is_dirty", (held,)) in loop.task.init_atoms
    assert kinds(loop, "acquirer") == []
    # hold_cup now carries the situation's precondition: it is not asked about again.
    assert sum("hold the cup" in q for q in asked(model)) == 1
    run_until(loop, "none")
    assert loop.phase is Phase.COMPLETED
    assert PlanStep("hold_cup", (other,)) in loop.executed_steps
    assert PlanStep("hold_cup", (held,)) not in loop.executed_steps
    assert loop.explanation() == "changed the plan: the cup is dirty"


def test_no_plan_acquires_a_stand_in_from_the_objects_present(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[DIRTY_CUP_BLOCKS_HOLDING])
    loop = tiny_loop(tiny, model)
    loop.plan()
    run_until(loop, "hold_cup")
    assert loop.observe("the cup is dirty") is Reaction.ACQUIRED
    assert [str(s) for s in loop.remaining_steps] == [
        "(find_cup__cup_as_bowl bowl_1)",
        "(hold_cup__cup_as_bowl bowl_1)",
        "(place_cup__cup_as_bowl bowl_1 table_1)",
    ]
    assert [e["question"] for e in kinds(loop, "acquirer")] == [
        "Can a bowl be used instead of the cup, in the task of serving a cup?",  # the role,
        "Is it suitable for a robot to hold a bowl?",  # then the failing step,
        "Is it suitable for a robot to place a bowl on the table?",  # then plan order,
        "Is it suitable for a robot to find a bowl?",  # then the rest (done already)
    ]
    (selection,) = kinds(loop, "selection")
    assert selection["how"] == "only candidate" and asked(model, "choice") == []
    variants = [e["variant"] for e in kinds(loop, "pddl_change") if "variant" in e]
    assert variants == ["hold_cup__cup_as_bowl", "place_cup__cup_as_bowl", "find_cup__cup_as_bowl"]
    (learned,) = loop.learned
    assert (learned.role_type, learned.new_type) == ("cup", "bowl")
    # The situation is about cup_1 now: steps with the bowl are not put to the monitor.
    assert not [q for q in asked(model) if "the bowl, if" in q]
    run_until(loop, "none")
    assert loop.phase is Phase.COMPLETED
    assert loop.explanation() == "used a bowl instead of the cup: the cup is dirty"


def test_a_new_situation_about_the_replaced_kind_is_set_aside(tiny: PlanningTask) -> None:
    # a model that finds anything about the cup alarming, even with the bowl in hand
    model = ScriptedModel(yes_no=[(r"if the cup is", False), (r"if the table is", True)])
    loop = tiny_loop(tiny, model)
    loop.plan()
    run_until(loop, "hold_cup")
    assert loop.observe("the cup is dirty") is Reaction.ACQUIRED
    before = len(asked(model))
    assert loop.observe("the cup is broken") is Reaction.FEASIBLE
    assert len(asked(model)) == before  # not put to the monitor at all
    assert kinds(loop, "situation")[-1]["text"] == (
        "set aside: the cup is broken: the plan no longer uses the cup (a bowl took its role)"
    )
    # a situation about a kind the plan still uses is checked as before
    assert loop.observe("the table is wet") is Reaction.FEASIBLE
    assert asked(model)[-1].endswith("place the bowl on the table, if the table is wet?")
    run_until(loop, "none")
    assert loop.phase is Phase.COMPLETED


def fill_cup_with(spec: TaskSpec, *extra: str) -> PlanningTask:
    return edits.keep_objects(spec.load(), [*spec.task_objects, *extra])


def test_prompt_3_chooses_among_accepted_stand_ins(fill_cup: TaskSpec) -> None:
    model = ScriptedModel(
        yes_no=[
            ("hold the cup, if the cup is dirty", False),
            ("if ", True),
            ("an? (bowl|mug)", True),
            ("", False),
        ],
        choices=[("replace the cup", "mug")],
    )
    task = fill_cup_with(fill_cup, "bowl_1", "mug_1", "sponge_1", "plate_1")
    loop = build_loop("cowp", fill_cup, model, problem=task)
    report = run_scheduled(loop, [ScheduledSituation("the cup is dirty", at_action="hold_cup")])
    assert report.outcome == "completed"
    assert asked(model, "choice") == [
        "There are some objects, such as a bowl, a mug. Which is the most suitable to "
        "replace the cup in the task of filling a cup with water from the faucet, if the "
        "cup is dirty?"
    ]
    assert kinds(loop, "selection")[0]["how"] == "model"
    assert {s.args[0] for s in loop.executed_steps if s.action.startswith("place_cup")} == {"mug_1"}
    accepted = {e["candidate"] for e in kinds(loop, "acquirer") if e["suitable"]}
    rejected = {e["candidate"] for e in kinds(loop, "acquirer") if not e["suitable"]}
    assert accepted == {"bowl", "mug"} and rejected == {"plate", "sponge"}
    assert report.explanation == "used a mug instead of the cup: the cup is dirty"


def test_a_chosen_stand_in_without_a_plan_gives_way_to_the_next() -> None:
    # Only objects on the table can be grasped from it: a cup is accepted and chosen,
    # but no plan exists with it, so the bowl (on the table) is tried next.
    spec = get_task("plate_to_sink")
    task = edits.keep_objects(spec.load(), [*spec.task_objects, "cup_1", "bowl_1"])
    model = ScriptedModel(
        yes_no=[("grasp the plate from the table, if the plate is broken", False), ("", True)],
        choices=[("", "cup")],
    )
    loop = build_loop("cowp", spec, model, problem=task)
    loop.plan()
    run_until(loop, "grasp_plate")
    assert loop.observe("the plate is broken") is Reaction.ACQUIRED
    selections = kinds(loop, "selection")
    assert [s["chosen"] for s in selections] == ["cup", "bowl"]
    assert [s["how"] for s in selections] == ["model", "only candidate"]
    assert loop.learned[-1].new_type == "bowl"
    assert PlanStep("grasp_plate__plate_as_bowl", ("bowl_1", "table_1")) in loop.remaining_steps


def test_a_stand_in_that_fails_too_is_replaced_in_turn(fill_cup: TaskSpec) -> None:
    model = ScriptedModel(
        yes_no=[("hold the (cup|bowl), if the \\1 is dirty", False), ("", True)],
        choices=[("", "bowl")],
    )
    loop = build_loop("cowp", fill_cup, model, problem=fill_cup_with(fill_cup, "bowl_1", "mug_1"))
    loop.plan()
    assert loop.observe("the bowl is dirty") is Reaction.FEASIBLE  # no bowl in the plan
    run_until(loop, "hold_cup")
    assert loop.observe("the cup is dirty") is Reaction.ACQUIRED
    assert [(r.role_type, r.new_type) for r in loop.learned] == [("cup", "bowl"), ("bowl", "mug")]
    assert PlanStep("hold_cup__cup_as_bowl__bowl_as_mug", ("mug_1",)) in loop.remaining_steps
    run_until(loop, "none")
    assert loop.phase is Phase.COMPLETED
    assert loop.explanation() == "used a mug instead of the bowl: the bowl is dirty"


def test_nothing_left_to_try_is_no_solution(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[DIRTY_CUP_BLOCKS_HOLDING, ("bowl", False)])
    loop = tiny_loop(tiny, model)
    loop.plan()
    run_until(loop, "hold_cup")
    assert loop.observe("the cup is dirty") is Reaction.NO_SOLUTION
    assert loop.phase is Phase.NO_SOLUTION
    assert loop.next_step() is None and loop.remaining_steps == ()
    assert loop.explanation() == (
        "gave up: the cup is dirty, and no present object could take the cup's role "
        "(a bowl: not fit for the role)"
    )
    report = loop.finish_report()
    assert report.outcome == "no_solution"
    assert report.of_kind("outcome")[-1].data["outcome"] == "no_solution"
    assert loop.observe("the table is wet") is Reaction.NO_SOLUTION


def test_a_situation_about_the_world_blocks_the_step_outright(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[("power outage", False)])
    loop = tiny_loop(tiny, model)
    loop.plan()
    assert loop.observe("there is a power outage") is Reaction.NO_SOLUTION
    (fact,) = kinds(loop, "predicate")
    assert fact["fact"] == "(there_is_power_outage)" and fact["source"] == "world"
    literals = [e["literal"] for e in kinds(loop, "pddl_change") if "literal" in e]
    assert literals[0] == "(not (there_is_power_outage))"
    # every stand-in's copy of the step would keep that precondition: none is asked about
    assert kinds(loop, "acquirer") == [] and len(model.questions("yes_no")) == 1
    assert loop.explanation() == (
        "gave up: there is a power outage, and no stand-in can help: it is about the world, "
        "not an object of find the cup"
    )


def test_a_situation_about_another_object_names_it_as_a_constant(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[("hold the cup, if the table is wobbly", False)])
    loop = tiny_loop(edits.add_object(tiny, "cup_2", "cup"), model)
    loop.plan()
    run_until(loop, "hold_cup")
    assert loop.observe("the table is wobbly") is Reaction.NO_SOLUTION
    changes = kinds(loop, "pddl_change")
    assert changes[1]["change"] == "promote_to_constant" and changes[1]["object"] == "table_1"
    assert changes[2]["literal"] == "(not (is_wobbly table_1))"
    assert "table_1" in loop.task.constants
    assert kinds(loop, "acquirer") == []  # another cup would not steady the table
    assert loop.explanation().endswith(
        "no stand-in can help: it is about the table, not an object of hold the cup"
    )


def test_report_records_every_question_plan_and_change(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[DIRTY_CUP_BLOCKS_HOLDING])
    loop = tiny_loop(tiny, model)
    report = run_scheduled(loop, [ScheduledSituation("the cup is dirty", at_step=2)])
    data = json.loads(report.to_json())
    assert data["outcome"] == "completed"
    assert data["explanation"] == "used a bowl instead of the cup: the cup is dirty"
    recorded = [e["question"] for e in data["events"] if e["kind"] in ("monitor", "acquirer")]
    assert sorted(set(recorded)) == sorted(set(asked(model)))
    assert [e["kind"] for e in data["events"]].count("plan") == 3  # first, blocked, acquired
    assert data["usage"]["calls"] == len(model.log)
    situation = next(e for e in data["events"] if e["kind"] == "situation")
    assert situation["before_step"] == 2


def test_listeners_see_events_as_they_happen(tiny: PlanningTask) -> None:
    seen: list[str] = []
    loop = tiny_loop(tiny, ScriptedModel())
    loop.report.listeners.append(lambda event: seen.append(event.kind))
    loop.plan()
    loop.step_done(True)
    assert seen == ["plan", "step"]


def test_observing_before_planning_plans_first(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[DIRTY_CUP_BLOCKS_HOLDING])
    loop = tiny_loop(tiny, model)
    assert loop.observe("the cup is dirty") is Reaction.ACQUIRED
    assert loop.next_step() == PlanStep("find_cup__cup_as_bowl", ("bowl_1",))


def test_a_failed_step_replans_from_the_same_state(tiny: PlanningTask) -> None:
    loop = tiny_loop(tiny, ScriptedModel())
    loop.plan()
    loop.step_done(True)
    assert loop.step_done(False) is Reaction.REPLANNED
    assert loop.next_step() == PlanStep("hold_cup", ("cup_1",))
    assert loop.report.of_kind("step")[-1].data["ok"] is False


def test_misuse_is_a_clear_error(tiny: PlanningTask) -> None:
    loop = tiny_loop(tiny, ScriptedModel())
    with pytest.raises(CowpError, match="no step is under way"):
        loop.step_done(True)
    with pytest.raises(CowpError, match="empty situation"):
        loop.observe("   ")


def test_closed_world_without_a_plan_is_no_solution(tiny: PlanningTask) -> None:
    task = edits.keep_objects(tiny, ["bowl_1", "table_1"])  # no cup at all
    loop = tiny_loop(task, ScriptedModel())
    assert loop.plan() == ()
    assert loop.phase is Phase.NO_SOLUTION
    assert "no plan even in the closed world" in loop.explanation()


def test_a_situation_whose_step_never_comes_is_reported(tiny: PlanningTask) -> None:
    loop = tiny_loop(tiny, ScriptedModel())
    report = run_scheduled(loop, [ScheduledSituation("the fork is bent", at_action="polish_fork")])
    assert report.outcome == "completed"
    assert report.of_kind("situation")[-1].data["raised"] is False


def test_giving_up_says_what_each_kind_asked_about_was_refused_for(tiny: PlanningTask) -> None:
    # The bowl may take the cup's role, but the robot cannot hold a bowl.
    model = ScriptedModel(yes_no=[DIRTY_CUP_BLOCKS_HOLDING, ("to hold a bowl", False), ("", True)])
    loop = tiny_loop(tiny, model)
    loop.plan()
    run_until(loop, "hold_cup")
    assert loop.observe("the cup is dirty") is Reaction.NO_SOLUTION
    assert loop.explanation().endswith("(a bowl: not suitable to hold a bowl)")
