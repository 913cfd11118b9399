"""Replaying steps on ground atoms: one meaning of preconditions and effects for all."""

from __future__ import annotations

from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.planning import PlanStep
from cowp_ros.planning.replay import apply_effects, binding, failed_precondition, replay

DOMAIN = """
(define (domain door)
  (:requirements :strips :negative-preconditions)
  (:predicates (open ?d) (locked ?d) (through ?d))
  (:action unlock :parameters (?d) :precondition (locked ?d) :effect (not (locked ?d)))
  (:action open :parameters (?d) :precondition (and (not (locked ?d)) (not (open ?d)))
    :effect (open ?d))
  (:action pass :parameters (?d) :precondition (open ?d)
    :effect (and (through ?d) (not (open ?d)))))
"""
PROBLEM = """
(define (problem p) (:domain door) (:objects front)
  (:init (locked front)) (:goal (through front)))
"""


def steps(*names: str) -> list[PlanStep]:
    return [PlanStep(name, ("front",)) for name in names]


def test_a_plan_replays_only_when_every_precondition_holds_in_turn() -> None:
    task = PlanningTask.from_text(DOMAIN, PROBLEM)
    assert replay(task, steps("unlock", "open", "pass"))
    assert not replay(task, steps("open", "pass"))  # still locked
    assert not replay(task, steps("unlock", "open"))  # goal not reached
    assert not replay(task, [PlanStep("fly", ("front",))])
    assert not replay(task, [PlanStep("unlock", ("front", "back"))])


def test_a_veto_refuses_a_step_that_would_otherwise_hold() -> None:
    task = PlanningTask.from_text(DOMAIN, PROBLEM)
    assert not replay(task, steps("unlock", "open", "pass"), lambda s: s.action != "open")


def test_the_failed_precondition_is_named_and_effects_delete_before_adding() -> None:
    task = PlanningTask.from_text(DOMAIN, PROBLEM)
    state = set(task.init_atoms)
    mapping = binding(task, "open", ["front"])
    assert mapping == {"?d": "front"}
    failed = failed_precondition(task, "open", mapping, state)
    assert failed is not None and not failed.positive and failed.atom.predicate == "locked"
    apply_effects(task, "unlock", mapping, state)
    apply_effects(task, "open", mapping, state)
    apply_effects(task, "pass", mapping, state)
    assert state == {Atom("through", ("front",))}
    assert binding(task, "open", []) is None
