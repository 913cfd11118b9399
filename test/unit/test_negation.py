"""Compiling negative preconditions away keeps exactly the same plans."""

from __future__ import annotations

from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import Atom, Literal, PlanningTask, edits
from cowp_ros.pddl.negation import compile_negative_preconditions
from cowp_ros.planning import make_planner
from cowp_ros.tasks import get_task


def test_task_without_negation_is_returned_unchanged(tiny: PlanningTask) -> None:
    assert compile_negative_preconditions(tiny) is tiny


def test_complement_predicate_replaces_the_negation(tiny: PlanningTask) -> None:
    task = edits.add_object(tiny, "cup_2", "cup")
    task = edits.add_precondition(task, "hold_cup", Literal(Atom("is_dirty", ("?c",)), False))
    task = edits.add_fact(task, Atom("is_dirty", ("cup_1",)))
    compiled = compile_negative_preconditions(task)
    assert "not (" not in str(compiled.action("hold_cup").precondition)
    assert "(not_is_dirty ?c)" in str(compiled.action("hold_cup").precondition)
    complements = {a for a in compiled.init_atoms if a.predicate == "not_is_dirty"}
    # Every object of the predicate's type except the dirty cup.
    assert {a.args[0] for a in complements} == {"cup_2", "bowl_1", "table_1"}
    assert ":negative-preconditions" not in compiled.domain_text()


def test_effects_keep_the_complement_in_step(tiny: PlanningTask) -> None:
    task = edits.add_precondition(tiny, "find_cup", Literal(Atom("hand_free"), False))
    compiled = compile_negative_preconditions(task)
    effect = str(compiled.action("hold_cup").effect)
    assert "(not_hand_free)" in effect  # hold_cup deletes hand_free, so adds its complement
    assert "(not (not_hand_free))" in str(compiled.action("place_cup").effect)


def test_a_complement_never_takes_a_declared_name(tiny: PlanningTask) -> None:
    """ "the cup not dirty" declares not_is_dirty; (not (is_dirty ?c)) needs a complement
    too, and must not take that name (it did, and compiling failed)."""
    task = edits.declare_predicate(tiny, "not_is_dirty", ["thing"])
    task = edits.add_precondition(task, "hold_cup", Literal(Atom("not_is_dirty", ("?c",)), False))
    task = edits.add_precondition(task, "hold_cup", Literal(Atom("is_dirty", ("?c",)), False))
    compiled = compile_negative_preconditions(task)
    new = set(compiled.predicates) - set(task.predicates)
    assert len(new) == 2 and "not_is_dirty" not in new
    assert compiled.predicates["not_is_dirty"] == task.predicates["not_is_dirty"]
    found = make_planner("pyperplan").solve(task, 60)
    assert found.found and [s.action for s in found.steps][:2] == ["find_cup", "hold_cup"]
    blocked = make_planner("pyperplan").solve(
        edits.add_fact(task, Atom("not_is_dirty", ("cup_1",))), 60
    )
    assert not blocked.found  # the compiled task means what the original says


def test_the_loop_survives_a_situation_named_like_a_complement() -> None:
    model = ScriptedModel(
        yes_no=[
            ("hold the cup, if the cup not dirty", False),
            ("the basket .*if the basket dirty", False),
            ("if ", True),
            ("bowl|basket", True),
        ]
    )
    loop = build_loop("cowp", get_task("fill_cup"), model)
    report = run_scheduled(
        loop,
        [
            ScheduledSituation("the cup not dirty", at_action="hold_cup"),
            ScheduledSituation("the basket dirty", at_action="fill_cup"),
        ],
    )
    facts = {e.data["fact"] for e in report.of_kind("predicate")}
    assert facts == {"(not_dirty cup_1)", "(dirty basket_1)"}
    # the planner ran on the task holding both (it raised before it could)
    reasons = [e.data["reason"] for e in report.of_kind("plan")]
    assert any("the basket dirty" in reason for reason in reasons)
    assert report.outcome in ("completed", "no_solution")
