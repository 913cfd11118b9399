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
   finding something) to right before the first step that needs what it does, so the
   robot walks to the table when it is about to serve there. Steps with preconditions
   keep their order: in a domain whose `near` facts are never deleted, moving "fill
   the cup" past "walk to the table" would replay as valid and be wrong.

`TidyPlanner` wraps any `Planner` with it. The project's grounded method plans with it;
the paper's COWP keeps its planner's plans as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import precondition_literals
from cowp_ros.pddl.formulas import literals_of
from cowp_ros.pddl.model import atom_of
from cowp_ros.planning.planner import Planner
from cowp_ros.planning.result import PlanResult, PlanStep


def _ground(atom: Atom, mapping: Mapping[str, str]) -> Atom:
    return Atom(atom.predicate, tuple(mapping.get(a, a) for a in atom.args))


def replay(task: PlanningTask, steps: Sequence[PlanStep]) -> bool:
    """True when every step's preconditions hold in turn and the goal holds at the end."""
    state = set(task.init_atoms)
    for step in steps:
        if step.action not in task.actions:
            return False
        action = task.action(step.action)
        params = [str(p) for p in action.parameters]
        if len(params) != len(step.args):
            return False
        mapping = dict(zip(params, step.args, strict=True))
        for literal in precondition_literals(task, step.action):
            if (_ground(literal.atom, mapping) in state) != literal.positive:
                return False
        effects = [(lit.positive, atom_of(lit.predicate)) for lit in literals_of(action.effect)]
        for positive, atom in effects:
            if not positive:
                state.discard(_ground(atom, mapping))
        for positive, atom in effects:
            if positive:
                state.add(_ground(atom, mapping))
    return task.goal_atoms <= state


def _added(task: PlanningTask, step: PlanStep) -> set[Atom]:
    action = task.action(step.action)
    mapping = dict(zip([str(p) for p in action.parameters], step.args, strict=True))
    return {
        _ground(atom_of(lit.predicate), mapping)
        for lit in literals_of(action.effect)
        if lit.positive
    }


def _first_consumer(task: PlanningTask, step: PlanStep, later: Sequence[PlanStep]) -> int | None:
    """Index in `later` of the first step whose preconditions need what `step` adds."""
    added = _added(task, step)
    for index, other in enumerate(later):
        action = task.action(other.action)
        mapping = dict(zip([str(p) for p in action.parameters], other.args, strict=True))
        needs = {
            _ground(lit.atom, mapping)
            for lit in precondition_literals(task, other.action)
            if lit.positive
        }
        if needs & added:
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
        if precondition_literals(task, step.action):
            continue
        rest = plan[:index] + plan[index + 1 :]
        consumer = _first_consumer(task, step, rest[index:])
        if consumer is None or consumer == 0:
            continue
        moved = [*rest[: index + consumer], step, *rest[index + consumer :]]
        if replay(task, moved):
            plan = moved
    return plan


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
        return replace(result, steps=steps, detail=(result.detail + " (tidied)").strip())
