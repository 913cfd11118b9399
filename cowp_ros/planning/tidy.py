"""Plans without wandering: drop steps the goal does not need, do each step when needed.

A classical planner returns one shortest plan among many, in whatever order its search
met the steps. When walking somewhere never makes the robot leave another place (the
`near` facts of a STRIPS domain are only ever added), "walk to the table, find the cup,
grasp it, walk to the faucet, fill it, deliver it" is as short as walking to the table
at the end, and the robot wanders. `tidy` rewrites a found plan, checking every rewrite
by replaying it from the task's initial state (preconditions of every step, the goal at
the end), so it can only return a valid plan:

1. **Drop** each step whose removal keeps the plan valid (latest first).
2. **Postpone** each step that needs nothing (no precondition: walking somewhere,
   finding something), and each walk (a step that puts the robot somewhere and needs
   it nowhere, whatever else it needs), to right before the first step that needs what
   it does, so the robot walks to the table when it is about to serve there. Other
   steps with preconditions keep their order: in a domain whose `near` facts are never
   deleted, moving "fill the cup" past "walk to the table" would replay as valid and be
   wrong.

`TidyPlanner` wraps any `Planner` with it. The project's grounded method plans with it;
the paper's COWP keeps its planner's plans as they are. Where the rewritten plan still
takes the robot back to a place it left (a domain whose steps at a place need none of
the walks between them), the plan's detail says so instead of calling it tidied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import precondition_literals
from cowp_ros.planning.planner import Planner
from cowp_ros.planning.replay import added_atoms, needed_atoms, replay
from cowp_ros.planning.result import PlanResult, PlanStep


def _first_consumer(task: PlanningTask, step: PlanStep, later: Sequence[PlanStep]) -> int | None:
    """Index in `later` of the first step whose preconditions need what `step` adds."""
    added = added_atoms(task, step)
    for index, other in enumerate(later):
        if needed_atoms(task, other) & added:
            return index
    return None


def tidy(task: PlanningTask, steps: Sequence[PlanStep]) -> list[PlanStep]:
    """`steps` without redundant steps, each as late as it can be (see the docstring).

    A plan that does not replay (a planner's plan for another task) is returned as it is.
    """
    plan = list(steps)
    if not replay(task, plan):
        return plan
    index = len(plan) - 1
    while index >= 0:
        shorter = plan[:index] + plan[index + 1 :]
        if replay(task, shorter):
            plan = shorter
        index -= 1
    for index in range(len(plan) - 1, -1, -1):
        step = plan[index]
        if precondition_literals(task, step.action) and not _is_walk(task, step):
            continue
        rest = plan[:index] + plan[index + 1 :]
        consumer = _first_consumer(task, step, rest[index:])
        if consumer is None or consumer == 0:
            continue
        moved = [*rest[: index + consumer], step, *rest[index + consumer :]]
        if replay(task, moved):
            plan = moved
    return plan


_WHERE = re.compile(r"^(robot_)?(at|near|in_room)(_robot)?$|^robot_(at|near|in)$", re.IGNORECASE)
"""One-place predicates that say where the robot is (`at`, `near`, `robot_at`, ...)."""


def returns_to(task: PlanningTask, steps: Sequence[PlanStep]) -> list[str]:
    """The places the robot goes back to after leaving them, in the order of `steps`.

    A step's place is where its `at`-like facts put the robot (a walk's destination),
    else where they need it; the route is the sequence of those places.
    """
    route: list[str] = []
    for step in steps:
        place = _place_of(task, step)
        if place is not None and (not route or route[-1] != place):
            route.append(place)
    back: list[str] = []
    for index, place in enumerate(route):
        if place in route[:index] and place not in back:
            back.append(place)
    return back


def _is_walk(task: PlanningTask, step: PlanStep) -> bool:
    """A step that takes the robot somewhere (it makes an `at`-like fact true) and needs
    it nowhere: done later, it walks later, and nothing is done at the wrong place."""
    needs_place = any(
        len(a.args) == 1 and _WHERE.match(a.predicate) for a in needed_atoms(task, step)
    )
    adds_place = any(
        len(a.args) == 1 and _WHERE.match(a.predicate) for a in added_atoms(task, step)
    )
    return adds_place and not needs_place


def _place_of(task: PlanningTask, step: PlanStep) -> str | None:
    for atoms in (added_atoms(task, step), needed_atoms(task, step)):
        places = {a.args[0] for a in atoms if len(a.args) == 1 and _WHERE.match(a.predicate)}
        if len(places) == 1:
            return places.pop()
        if places:  # at two places at once: says nothing of a route
            return None
    return None


class TidyPlanner:
    """A `Planner` whose plans are tidied (`tidy`); its name is the wrapped planner's."""

    def __init__(self, planner: Planner) -> None:
        self.planner = planner
        self.name = planner.name

    def solve(self, task: PlanningTask, timeout_s: float = 60.0) -> PlanResult:
        result = self.planner.solve(task, timeout_s)
        if not result.found:
            return result
        steps = tuple(tidy(task, result.steps))
        if steps == result.steps:
            return result
        back = returns_to(task, steps)
        said = f"(shortened; it still goes back to {', '.join(back)})" if back else "(tidied)"
        return replace(result, steps=steps, detail=f"{result.detail} {said}".strip())
