"""Compiling negative preconditions away keeps exactly the same plans."""

from __future__ import annotations

import pytest

from cowp_ros.pddl import Atom, Literal, PddlLoadError, PlanningTask, edits
from cowp_ros.pddl.negation import compile_negative_preconditions


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


def test_clashing_complement_name_is_refused(tiny: PlanningTask) -> None:
    task = edits.declare_predicate(tiny, "not_is_dirty", ["thing"])
    task = edits.add_precondition(task, "hold_cup", Literal(Atom("is_dirty", ("?c",)), False))
    with pytest.raises(PddlLoadError, match="already declares 'not_is_dirty'"):
        compile_negative_preconditions(task)
