"""Both planners on real tasks: plans, "no plan", deadlines, and the same answers."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from cowp_ros.pddl import Atom, Literal, PlanningTask, edits
from cowp_ros.planning import PlannerError, PlanStatus, PlanStep, make_planner
from cowp_ros.planning.fast_downward import is_available
from cowp_ros.planning.process import run_with_deadline
from cowp_ros.planning.pyperplan_planner import PyperplanPlanner
from cowp_ros.tasks import TaskSpec

PLANNERS = [
    "pyperplan",
    pytest.param(
        "fast_downward",
        marks=pytest.mark.skipif(
            not is_available(), reason="up-fast-downward is not installed in this venv"
        ),
    ),
]


def dirty_only_cup(task: PlanningTask) -> PlanningTask:
    task = edits.add_precondition(task, "hold_cup", Literal(Atom("is_dirty", ("?c",)), False))
    return edits.add_fact(task, Atom("is_dirty", ("cup_1",)))


@pytest.mark.parametrize("name", PLANNERS)
def test_plans_the_fill_cup_task(name: str, fill_cup: TaskSpec) -> None:
    result = make_planner(name).solve(fill_cup.build_problem(43), 60)
    assert result.status is PlanStatus.FOUND
    assert result.planner == name
    assert set(result.steps) == {
        PlanStep("find_faucet", ("faucet_1",)),
        PlanStep("turnon_faucet", ("faucet_1",)),
        PlanStep("find_cup", ("cup_1",)),
        PlanStep("hold_cup", ("cup_1",)),
        PlanStep("fill_cup", ("cup_1", "faucet_1")),
        PlanStep("place_cup", ("cup_1", "table_1")),
    }
    assert result.steps[-1] == PlanStep("place_cup", ("cup_1", "table_1"))
    assert result.seconds > 0


@pytest.mark.parametrize("name", PLANNERS)
def test_says_no_plan_clearly(name: str, tiny: PlanningTask) -> None:
    result = make_planner(name).solve(dirty_only_cup(tiny), 60)
    assert result.status is PlanStatus.NO_PLAN
    assert not result.found and result.steps == ()
    assert result.to_dict()["status"] == "no_plan"


@pytest.mark.parametrize("name", PLANNERS)
def test_negative_preconditions_give_the_same_plan(name: str, tiny: PlanningTask) -> None:
    task = dirty_only_cup(edits.add_object(tiny, "cup_2", "cup"))
    result = make_planner(name).solve(task, 60)
    assert [str(s) for s in result.steps] == [
        "(find_cup cup_2)",
        "(hold_cup cup_2)",
        "(place_cup cup_2 table_1)",
    ]


LIGHTS = 18
SWITCHES_DOMAIN = """
(define (domain switches)
  (:requirements :strips :typing)
  (:types light)
  (:predicates (on ?l - light) (off ?l - light) (done))
  (:action switch_on :parameters (?l - light) :precondition (off ?l)
    :effect (and (on ?l) (not (off ?l))))
  (:action switch_off :parameters (?l - light) :precondition (on ?l)
    :effect (and (off ?l) (not (on ?l))))
  (:action finish :parameters (?l - light) :precondition (and (on ?l) (off ?l))
    :effect (done)))
"""


def switches(count: int) -> PlanningTask:
    """The goal looks reachable to relaxed heuristics but is not, and 2^count states
    stand between: a search runs for minutes unless a deadline stops it."""
    lights = " ".join(f"l{i}" for i in range(count))
    problem = (
        f"(define (problem many) (:domain switches) (:objects {lights} - light) "
        f"(:init {' '.join(f'(off l{i})' for i in range(count))}) (:goal (done)))"
    )
    return PlanningTask.from_text(SWITCHES_DOMAIN, problem, "switches")


def test_deadline_stops_a_slow_pyperplan_search() -> None:
    planner = PyperplanPlanner(search="astar", heuristic="hmax")
    result = planner.solve(switches(LIGHTS), timeout_s=1.0)
    assert result.status is PlanStatus.TIMEOUT
    assert "no answer in 1 s" in result.detail


PIGEONS_DOMAIN = """
(define (domain pigeons)
  (:requirements :strips :typing)
  (:types pigeon hole)
  (:predicates (free ?h - hole) (out ?p - pigeon) (placed ?p - pigeon))
  (:action put :parameters (?p - pigeon ?h - hole) :precondition (and (out ?p) (free ?h))
    :effect (and (placed ?p) (not (out ?p)) (not (free ?h)))))
"""


def pigeonhole(holes: int) -> PlanningTask:
    """One pigeon more than holes: unsolvable, which no relaxation or invariant the
    Fast Downward translator finds can tell, so the search must enumerate placements."""
    pigeons = [f"p{i}" for i in range(holes + 1)]
    hole_names = [f"h{i}" for i in range(holes)]
    problem = (
        f"(define (problem crowd) (:domain pigeons) "
        f"(:objects {' '.join(pigeons)} - pigeon {' '.join(hole_names)} - hole) "
        f"(:init {' '.join(f'(out {p})' for p in pigeons)} "
        f"{' '.join(f'(free {h})' for h in hole_names)}) "
        f"(:goal (and {' '.join(f'(placed {p})' for p in pigeons)})))"
    )
    return PlanningTask.from_text(PIGEONS_DOMAIN, problem, "pigeons")


@pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed in this venv")
def test_deadline_stops_a_slow_fast_downward_search() -> None:
    result = make_planner("fast_downward").solve(pigeonhole(30), timeout_s=2.0)
    assert result.status is PlanStatus.TIMEOUT


def test_deadline_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild_finished"
    grandchild = tmp_path / "grandchild.py"
    grandchild.write_text(f"import time\ntime.sleep(2)\nopen({str(marker)!r}, 'w').close()\n")
    child = tmp_path / "child.py"
    child.write_text(
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(grandchild)!r}])\n"
        "time.sleep(30)\n"
    )
    outcome = run_with_deadline([sys.executable, str(child)], 0.5, tmp_path)
    assert outcome.timed_out
    time.sleep(2.5)  # the grandchild would have written its marker by now if alive
    assert not marker.exists()


def test_blind_search_runs_without_a_heuristic(tiny: PlanningTask) -> None:
    result = PyperplanPlanner(search="bfs", heuristic="none").solve(tiny, 60)
    assert [str(s) for s in result.steps] == [
        "(find_cup cup_1)",
        "(hold_cup cup_1)",
        "(place_cup cup_1 table_1)",
    ]


def test_unknown_planner_names_the_choices() -> None:
    with pytest.raises(PlannerError, match="pyperplan, fast_downward"):
        make_planner("graphplan")


@pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed in this venv")
def test_fast_downward_aliases() -> None:
    assert make_planner("fd").name == "fast_downward"
    assert make_planner("Fast-Downward").name == "fast_downward"


def test_plan_step_parsing() -> None:
    assert PlanStep.parse("(FILL_CUP cup_1 faucet_1)") == PlanStep(
        "fill_cup", ("cup_1", "faucet_1")
    )
    assert str(PlanStep("walk", ("room_1",))) == "(walk room_1)"
    with pytest.raises(ValueError):
        PlanStep.parse("()")


def test_request_deadline_caps_what_a_client_asks_for() -> None:
    from cowp_ros.planning.planner import request_deadline

    assert request_deadline(10.0, 60.0, 300.0) == 10.0
    assert request_deadline(0.0, 60.0, 300.0) == 60.0
    assert request_deadline(-5.0, 60.0, 300.0) == 60.0
    assert request_deadline(float("nan"), 60.0, 300.0) == 60.0
    assert request_deadline(1e9, 60.0, 300.0) == 300.0
    assert request_deadline(float("inf"), 60.0, 300.0) == 300.0
