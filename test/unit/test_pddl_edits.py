"""The edits COWP makes keep the task valid and mean what they say (checked by planning)."""

from __future__ import annotations

import pytest

from cowp_ros.pddl import Atom, Literal, PlanningTask, UnsafeIdentifierError, edits
from cowp_ros.pddl.edits import PddlEditError
from cowp_ros.planning import PlanStep, make_planner

DIRTY = Literal(Atom("is_dirty", ("?c",)), positive=False)


def steps(task: PlanningTask) -> list[str]:
    result = make_planner("pyperplan").solve(task, 60)
    return [str(s) for s in result.steps] if result.found else []


def test_negative_precondition_blocks_only_the_affected_object(tiny: PlanningTask) -> None:
    task = edits.add_object(tiny, "cup_2", "cup")
    task = edits.add_precondition(task, "hold_cup", DIRTY)
    task = edits.add_fact(task, Atom("is_dirty", ("cup_1",)))
    assert "(not (is_dirty ?c))" in str(task.action("hold_cup").precondition)
    assert ":negative-preconditions" in task.domain_text()
    assert task.predicates["is_dirty"] == ("thing",)
    assert "(hold_cup cup_2)" in steps(task)
    assert "(hold_cup cup_1)" not in steps(task)
    task.validated()  # the edited task writes and reparses


def test_adding_the_same_precondition_twice_changes_nothing(tiny: PlanningTask) -> None:
    once = edits.add_precondition(tiny, "hold_cup", DIRTY)
    twice = edits.add_precondition(once, "hold_cup", DIRTY)
    assert str(twice.action("hold_cup").precondition) == str(once.action("hold_cup").precondition)


def test_precondition_must_name_a_parameter_or_constant(tiny: PlanningTask) -> None:
    with pytest.raises(PddlEditError, match="neither a parameter"):
        edits.add_precondition(tiny, "hold_cup", Literal(Atom("is_dirty", ("?x",)), False))
    with pytest.raises(PddlEditError, match="neither a parameter"):
        edits.add_precondition(tiny, "hold_cup", Literal(Atom("is_dirty", ("bowl_1",)), False))


def test_unknown_action_lists_the_known_ones(tiny: PlanningTask) -> None:
    with pytest.raises(Exception, match=r"has no action 'fly'.*find_cup"):
        edits.add_precondition(tiny, "fly", DIRTY)


def test_add_fact_checks_objects_names_and_arity(tiny: PlanningTask) -> None:
    with pytest.raises(PddlEditError, match="unknown object 'cup_9'"):
        edits.add_fact(tiny, Atom("is_dirty", ("cup_9",)))
    with pytest.raises(UnsafeIdentifierError):
        edits.add_fact(tiny, Atom("is dirty)", ("cup_1",)))
    with pytest.raises(PddlEditError, match="takes 0 argument"):
        edits.add_fact(tiny, Atom("hand_free", ("cup_1",)))
    with pytest.raises(PddlEditError, match="takes a place"):
        edits.add_fact(tiny, Atom("served", ("cup_1",)))
    task = edits.add_fact(tiny, Atom("is_dirty", ("cup_1",)))
    assert Atom("is_dirty", ("cup_1",)) in task.init_atoms
    assert edits.remove_fact(task, Atom("is_dirty", ("cup_1",))).init_atoms == tiny.init_atoms


def test_add_object_refuses_duplicates_and_unknown_types(tiny: PlanningTask) -> None:
    with pytest.raises(PddlEditError, match="already exists"):
        edits.add_object(tiny, "cup_1", "cup")
    with pytest.raises(PddlEditError, match="unknown type 'spaceship'"):
        edits.add_object(tiny, "ship_1", "spaceship")
    with pytest.raises(UnsafeIdentifierError):
        edits.add_object(tiny, "cup_2 - cup) (:init", "cup")
    assert edits.add_object(tiny, "mug_1", "bowl").objects["mug_1"] == "bowl"


def test_action_variant_puts_another_type_in_the_role(tiny: PlanningTask) -> None:
    task = edits.add_precondition(tiny, "hold_cup", DIRTY)
    task = edits.add_fact(task, Atom("is_dirty", ("cup_1",)))
    assert steps(task) == []  # the only cup is dirty: no plan
    for action in ("find_cup", "hold_cup", "place_cup"):
        task, name = edits.add_action_variant(task, action, "cup", "bowl")
        assert name == f"{action}__cup_as_bowl"
        assert edits.base_action_name(name) == action
    assert task.parameter_types("place_cup__cup_as_bowl") == ("bowl", "table")
    # The variant inherits the monitor's precondition with the retyped parameter.
    assert "(not (is_dirty ?c))" in str(task.action("hold_cup__cup_as_bowl").precondition)
    assert steps(task) == [
        "(find_cup__cup_as_bowl bowl_1)",
        "(hold_cup__cup_as_bowl bowl_1)",
        "(place_cup__cup_as_bowl bowl_1 table_1)",
    ]
    same, name = edits.add_action_variant(task, "hold_cup", "cup", "bowl")
    assert same is task and name == "hold_cup__cup_as_bowl"
    task.validated()


def test_action_variant_refuses_bad_roles(tiny: PlanningTask) -> None:
    with pytest.raises(PddlEditError, match="no parameter of type 'table'"):
        edits.add_action_variant(tiny, "hold_cup", "table", "bowl")
    with pytest.raises(PddlEditError, match="unknown type"):
        edits.add_action_variant(tiny, "hold_cup", "cup", "teapot")
    with pytest.raises(PddlEditError, match="predicate served takes a place"):
        edits.add_action_variant(tiny, "place_cup", "table", "bowl")


def test_promote_to_constant_lets_an_action_name_an_object(tiny: PlanningTask) -> None:
    task = edits.promote_to_constant(tiny, "table_1")
    assert "table_1" in task.constants
    assert "table_1" not in task.problem_object_names
    task = edits.add_fact(task, Atom("is_wobbly", ("table_1",)))
    task = edits.add_precondition(task, "find_cup", Literal(Atom("is_wobbly", ("table_1",)), False))
    assert steps(task) == []  # finding any cup now needs a table that is not wobbly
    task.validated()


def test_apply_action_progresses_the_state(tiny: PlanningTask) -> None:
    task = edits.apply_action(tiny, "find_cup", ["cup_1"])
    task = edits.apply_action(task, "hold_cup", ["cup_1"])
    assert task.init_atoms == {Atom("found", ("cup_1",)), Atom("holding", ("cup_1",))}
    assert steps(task) == ["(place_cup cup_1 table_1)"]
    with pytest.raises(PddlEditError, match="takes 2 argument"):
        edits.apply_action(task, "place_cup", ["cup_1"])
    assert PlanStep("place_cup", ("cup_1", "table_1")).args == ("cup_1", "table_1")


def test_keep_objects_drops_facts_and_protects_the_goal(tiny: PlanningTask) -> None:
    task = edits.add_fact(tiny, Atom("is_dirty", ("bowl_1",)))
    kept = edits.keep_objects(task, ["cup_1", "table_1"])
    assert set(kept.objects) == {"cup_1", "table_1"}
    assert Atom("is_dirty", ("bowl_1",)) not in kept.init_atoms
    with pytest.raises(PddlEditError, match="the goal needs them"):
        edits.keep_objects(task, ["cup_1"])
