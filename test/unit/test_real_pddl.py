"""Domains written for a planner, not for this project: read as Fast Downward reads
them, edited beside what they already say, replayed with PDDL's semantics, and bounded
by what is reachable. Real libraries throughout: the `pddl` library holds the model,
Fast Downward and pyperplan plan."""

from __future__ import annotations

import time

import pytest

from cowp_ros.cowp.loop_events import EditSkipped, LoopEvent, PreconditionAdded, VariantAdded
from cowp_ros.cowp.repairs import add_stand_in
from cowp_ros.errors import CowpError
from cowp_ros.limits import LimitError
from cowp_ros.pddl import Atom, Literal, PddlLoadError, PlanningTask, edits
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.planning.budget import check_grounding, ground_action_count, reachable_action_count
from cowp_ros.planning.fast_downward import is_available
from cowp_ros.planning.replay import replay

needs_fd = pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed")

# A robot domain as a user writes it: upper case, types under two parents over two
# lines, `object` declared as a type, `either`, a constant, equality, a quantified and
# a conditional effect, action costs; `:equality` and `:conditional-effects` undeclared.
DOMAIN = """
; a user's robot domain
(DEFINE (DOMAIN Fetch)
  (:REQUIREMENTS :STRIPS :TYPING :ACTION-COSTS :NEGATIVE-PRECONDITIONS)
  (:TYPES object place - OBJECT area - place
          room - area room - place
          cup mug - item item)
  (:CONSTANTS dock - room)
  (:PREDICATES (at ?p - place) (in ?i - item ?p - place) (holding ?i - item)
               (hand_free) (door_open ?r - room) (clean ?x - (either cup mug)))
  (:FUNCTIONS (total-cost) - number (distance ?a ?b - place) - number)
  (:ACTION move
    :parameters (?from ?to - place)
    :precondition (and (at ?from) (not (= ?from ?to)))
    :effect (and (not (at ?from)) (at ?to)
                 (forall (?r - room) (when (= ?r ?to) (door_open ?r)))
                 (increase (total-cost) (distance ?from ?to))))
  (:ACTION pick
    :parameters (?i - cup ?p - place)
    :precondition (and (at ?p) (in ?i ?p) (hand_free)
                       (forall (?o - item) (not (holding ?o))))
    :effect (and (holding ?i) (not (in ?i ?p)) (not (hand_free))
                 (increase (total-cost) 1)))
  (:ACTION drop
    :parameters (?i - cup)
    :precondition (holding ?i)
    :effect (and (not (holding ?i)) (hand_free) (in ?i dock)
                 (increase (total-cost) 1))))
"""
PROBLEM = """
(DEFINE (PROBLEM fetch-1) (:DOMAIN fetch)
  (:OBJECTS kitchen hall - room cup_1 - cup mug_1 - mug)
  (:INIT (at hall) (in cup_1 kitchen) (in mug_1 kitchen) (hand_free)
         (= (total-cost) 0)
         (= (distance hall kitchen) 5) (= (distance kitchen hall) 5)
         (= (distance hall dock) 2) (= (distance dock hall) 2)
         (= (distance kitchen dock) 9) (= (distance dock kitchen) 9))
  (:GOAL (and (in cup_1 dock)))
  (:METRIC minimize (total-cost)))
"""


@pytest.fixture
def fetch() -> PlanningTask:
    return PlanningTask.from_text(DOMAIN, PROBLEM, "fetch")


def test_a_planners_domain_reads_as_the_planner_reads_it(fetch: PlanningTask) -> None:
    assert fetch.types["room"] == "area"  # room - area, room - place: area, below place
    assert fetch.is_subtype("room", "place")
    assert fetch.constants == frozenset({"dock"})
    assert fetch.objects["kitchen"] == "room"
    assert Atom("at", ("hall",)) in fetch.init_atoms  # lowercased, numeric facts apart
    assert fetch.has_action_costs
    assert fetch.goal_atoms == frozenset({Atom("in", ("cup_1", "dock"))})


def test_the_written_domain_declares_what_its_user_declared(fetch: PlanningTask) -> None:
    text = fetch.domain_text()
    requirements = text.split("(:requirements", 1)[1].split(")", 1)[0].split()
    assert sorted(requirements) == [
        ":action-costs",
        ":negative-preconditions",
        ":strips",
        ":typing",
    ]
    assert "(increase (total-cost) (distance ?from ?to))" in text
    assert "(:metric minimize (total-cost))" in fetch.problem_text()
    assert "(= (distance hall kitchen) 5)" in fetch.problem_text()
    again = fetch.validated()
    assert again.init_atoms == fetch.init_atoms and again.has_action_costs


def test_what_cannot_be_handled_is_named_with_its_line() -> None:
    numeric = DOMAIN.replace(
        "(and (at ?from) (not (= ?from ?to)))", "(and (at ?from)\n (> (distance ?from ?to) 0))"
    )
    with pytest.raises(PddlLoadError) as refused:
        PlanningTask.from_text(numeric, PROBLEM, "user")
    assert "line 15" in refused.value.message and "(> ...)" in refused.value.message
    assert "Traceback" not in str(refused.value)
    durative = "(define (domain d)\n (:requirements :durative-actions)\n (:durative-action a))"
    with pytest.raises(PddlLoadError, match=r"line 3: \(:durative-action"):
        PlanningTask.from_text(durative, PROBLEM, "user")
    cut = "(define (domain d) (:requirements :typing)\n (:types a b"
    with pytest.raises(PddlLoadError, match=r"line 2: \(:types ...\) is never closed"):
        PlanningTask.from_text(cut, PROBLEM, "user")
    two_lines = "(define (domain d) (:requirements :typing)\n (:types a b - object\n c - a c - b))"
    with pytest.raises(PddlLoadError, match=r"lines 3, 3: type 'c' has the unrelated parents a, b"):
        PlanningTask.from_text(two_lines, PROBLEM, "user")


def test_a_situation_precondition_joins_a_quantified_one(fetch: PlanningTask) -> None:
    changed = edits.add_precondition(fetch, "pick", Literal(Atom("is_dirty", ("?i",)), False))
    precondition = str(changed.action("pick").precondition)
    assert "(forall (?o - item) (not (holding ?o)))" in precondition
    assert "(not (is_dirty ?i))" in precondition
    reread = changed.validated()
    assert str(reread.action("pick").precondition) == precondition
    assert ":negative-preconditions" in reread.domain_text()


def test_a_stand_in_copy_keeps_quantified_and_conditional_parts(fetch: PlanningTask) -> None:
    changed, variant = edits.add_action_variant(fetch, "drop", "cup", "mug")
    assert variant == "drop__cup_as_mug"
    copy = changed.action(variant)
    assert str(copy.effect) == str(fetch.action("drop").effect)  # the same names, retyped
    assert [str(t) for v in copy.parameters for t in v.type_tags] == ["mug"]
    changed, variant = edits.add_action_variant(changed, "pick", "cup", "mug")
    assert "(forall (?o - item) (not (holding ?o)))" in str(changed.action(variant).precondition)
    assert changed.validated().actions.keys() == changed.actions.keys()


def test_an_impossible_copy_is_told_and_the_run_goes_on(fetch: PlanningTask) -> None:
    # moving is priced by (distance ?from ?to): a kitchen's stand-in has no distances
    with pytest.raises(edits.PddlEditError, match=r"action cost \(increase.*names the place"):
        edits.add_action_variant(fetch, "move", "place", "area")
    told: list[LoopEvent] = []
    _, variants = add_stand_in(fetch, ["move", "drop"], "place", "area", told.append)
    assert variants == []  # drop has no place parameter either: both told, none added
    assert [type(e) for e in told] == [EditSkipped, EditSkipped]
    first = told[0]
    assert isinstance(first, EditSkipped)
    assert "increase" in first.reason and first.action == "move"
    _changed, variants = add_stand_in(fetch, ["pick", "drop"], "cup", "mug", told.append)
    assert variants == ["pick__cup_as_mug", "drop__cup_as_mug"]
    assert isinstance(told[-1], VariantAdded) and not isinstance(told[-1], PreconditionAdded)


def test_a_step_applies_its_conditional_and_quantified_effects(fetch: PlanningTask) -> None:
    after = edits.apply_action(fetch, "move", ["hall", "kitchen"])
    assert Atom("at", ("kitchen",)) in after.init_atoms
    assert Atom("door_open", ("kitchen",)) in after.init_atoms  # (when (= ?r ?to) ...)
    assert Atom("door_open", ("hall",)) not in after.init_atoms
    assert "(= (distance hall kitchen) 5)" in after.problem_text()  # costs kept


def test_replay_reads_equality_and_quantifiers(fetch: PlanningTask) -> None:
    plan = [
        PlanStep("move", ("hall", "kitchen")),
        PlanStep("pick", ("cup_1", "kitchen")),
        PlanStep("drop", ("cup_1",)),
    ]
    assert replay(fetch, plan)
    assert not replay(fetch, [PlanStep("move", ("hall", "hall")), *plan[1:]])  # (= ?from ?to)
    holding = [plan[0], plan[1], PlanStep("pick", ("cup_1", "kitchen"))]
    assert not replay(fetch, holding)  # forall: nothing held


@needs_fd
def test_fast_downward_plans_it_cheapest_first(fetch: PlanningTask) -> None:
    result = make_planner("auto").solve(fetch, 30.0)
    assert result.found and result.planner == "fast_downward"
    assert replay(fetch, result.steps)
    # hall -> kitchen (5), pick (1), drop (1) puts the cup at the dock: cost 7
    assert result.extra["cost"] == 7


def test_pyperplan_names_what_it_cannot_read(fetch: PlanningTask) -> None:
    with pytest.raises(
        CowpError, match=r"pyperplan reads STRIPS only: action .move. precondition has inequality"
    ):
        make_planner("pyperplan").solve(fetch, 10.0)


def test_pyperplan_plans_a_strips_domain_with_costs_by_leaving_them_out() -> None:
    domain = DOMAIN.replace("(not (= ?from ?to))", "(at ?from)").replace(
        "(forall (?r - room) (when (= ?r ?to) (door_open ?r)))", ""
    )
    domain = domain.replace("(forall (?o - item) (not (holding ?o)))", "(hand_free)")
    task = PlanningTask.from_text(domain, PROBLEM, "strips")
    result = make_planner("pyperplan").solve(task, 20.0)
    assert result.found and replay(task, result.steps)


GRID = """
(define (domain grid) (:requirements :strips :typing) (:types cell)
  (:predicates (at ?c - cell) (next ?a ?b - cell) (seen ?a ?b ?c ?d - cell))
  (:action go :parameters (?a ?b - cell) :precondition (and (at ?a) (next ?a ?b))
    :effect (and (at ?b) (not (at ?a))))
  (:action look :parameters (?a ?b ?c ?d - cell)
    :precondition (and (at ?a) (next ?a ?b) (next ?b ?c) (next ?c ?d))
    :effect (seen ?a ?b ?c ?d)))
"""


def grid(cells: int) -> PlanningTask:
    names = [f"c{i}" for i in range(cells)]
    nexts = " ".join(f"(next c{i} c{i + 1})" for i in range(cells - 1))
    problem = (
        f"(define (problem g) (:domain grid) (:objects {' '.join(names)} - cell)"
        f" (:init (at c0) {nexts}) (:goal (at c{cells - 1})))"
    )
    return PlanningTask.from_text(GRID, problem, "grid")


def test_the_bound_counts_reachable_actions_not_a_product() -> None:
    task = grid(40)  # 40^4 + 40^2 = 2,561,600 by the product; a line of cells reaches few
    assert ground_action_count(task) == 2_561_600
    started = time.monotonic()
    assert check_grounding(task, limit=200_000) == 39 + 37  # go along, look ahead three
    assert time.monotonic() - started < 2
    reach = reachable_action_count(task, limit=50)
    assert reach.decided and reach.actions == 51  # stopped just past the bound
    with pytest.raises(LimitError, match="more than 50 of its ground actions are reachable"):
        check_grounding(task, limit=50)
