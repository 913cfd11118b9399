"""Task folders the harness (and the tests) write for faults the shipped tasks cannot cause.

`write_slow_registry` writes a registry whose one task keeps pyperplan and Fast Downward
busy for minutes: N + 1 pigeons for N holes. The goal (every pigeon in a hole) is
reachable when delete effects are ignored, so the heuristic sees a way, and no planner
here proves it unreachable without counting, which they do not: they walk the states,
about N! of them, before giving up. A signal sent while one searches lands mid-plan.
"""

from __future__ import annotations

from pathlib import Path

SLOW_TASK = "slow_pigeons"


def slow_domain() -> str:
    return """(define (domain pigeons)
  (:requirements :strips :typing)
  (:types pigeon hole)
  (:predicates (out ?p - pigeon) (inside ?p - pigeon) (free ?h - hole))
  (:action put :parameters (?p - pigeon ?h - hole)
    :precondition (and (out ?p) (free ?h))
    :effect (and (inside ?p) (not (out ?p)) (not (free ?h)))))
"""


def slow_problem(holes: int) -> str:
    pigeons = [f"p{i}" for i in range(holes + 1)]
    places = [f"h{i}" for i in range(holes)]
    init = " ".join([*(f"(out {p})" for p in pigeons), *(f"(free {h})" for h in places)])
    goal = " ".join(f"(inside {p})" for p in pigeons)
    return f"""(define (problem more_pigeons_than_holes) (:domain pigeons)
  (:objects {" ".join(pigeons)} - pigeon {" ".join(places)} - hole)
  (:init {init})
  (:goal (and {goal})))
"""


def write_slow_registry(folder: Path, holes: int = 12) -> Path:
    """A registry folder (for COWP_PDDL_DIR) holding the slow task; returns the folder."""
    task = folder / SLOW_TASK
    task.mkdir(parents=True, exist_ok=True)
    (task / "domain.pddl").write_text(slow_domain())
    (task / "problem.pddl").write_text(slow_problem(holes))
    (folder / "tasks.yaml").write_text(
        f"""{SLOW_TASK}:
  description: putting more pigeons than there are holes into holes (slowly unsolvable)
  domain: {SLOW_TASK}/domain.pddl
  problem: {SLOW_TASK}/problem.pddl
  task_objects: [p0, h0]
  phrases:
    put: put {{0}} into {{1}}
"""
    )
    return folder
