"""Replaying plan steps on a set of ground atoms, without a planner.

Three places need to know whether steps still work from some state: tidying a found
plan (every rewrite is replayed before it is kept), the benchmark's world simulator
(which refuses a step whose precondition fails), and the oracle baseline (is the
current plan still good under what is known now?). They share these functions so that
"a step's preconditions hold" and "a step's effects" mean one thing everywhere:
PDDL's own, in `pddl.semantics` (deletes before adds, equality, quantifiers and
conditional effects read as a planner reads them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import precondition_literals
from cowp_ros.pddl.formulas import top_literals
from cowp_ros.pddl.model import Literal, atom_of
from cowp_ros.pddl.semantics import apply_effect, holds
from cowp_ros.planning.result import PlanStep


def ground(atom: Atom, mapping: Mapping[str, str]) -> Atom:
    """`atom` with its `?variables` replaced by the objects `mapping` binds them to."""
    return Atom(atom.predicate, tuple(mapping.get(a, a) for a in atom.args))


def binding(task: PlanningTask, action_name: str, args: Sequence[str]) -> dict[str, str] | None:
    """Each parameter of `action_name` bound to its argument; None when the count differs."""
    params = [str(p) for p in task.action(action_name).parameters]
    if len(params) != len(args):
        return None
    return dict(zip(params, args, strict=True))


def failed_precondition(
    task: PlanningTask, action_name: str, mapping: Mapping[str, str], state: set[Atom]
) -> Literal | None:
    """The first precondition literal of the bound action that `state` breaks, or None
    (equality, quantified and disjunctive parts: `precondition_holds`)."""
    for literal in precondition_literals(task, action_name):
        if (ground(literal.atom, mapping) in state) != literal.positive:
            return literal
    return None


def precondition_holds(
    task: PlanningTask, action_name: str, mapping: Mapping[str, str], state: set[Atom]
) -> bool:
    """True when the bound action's whole precondition holds in `state`."""
    return holds(task, task.action(action_name).precondition, mapping, state)


def apply_effects(
    task: PlanningTask, action_name: str, mapping: Mapping[str, str], state: set[Atom]
) -> None:
    """Change `state` in place by the bound action's effects (deletes, then adds;
    conditional effects by the state before)."""
    apply_effect(task, task.action(action_name).effect, mapping, state)


def added_atoms(task: PlanningTask, step: PlanStep) -> set[Atom]:
    """The ground atoms `step` makes true."""
    mapping = binding(task, step.action, step.args) or {}
    return {
        ground(atom_of(lit.predicate), mapping)
        for lit in top_literals(task.action(step.action).effect)
        if lit.positive
    }


def needed_atoms(task: PlanningTask, step: PlanStep) -> set[Atom]:
    """The ground atoms `step` needs true before it runs."""
    mapping = binding(task, step.action, step.args) or {}
    return {
        ground(lit.atom, mapping)
        for lit in precondition_literals(task, step.action)
        if lit.positive
    }


def replay(
    task: PlanningTask,
    steps: Iterable[PlanStep],
    allows: Callable[[PlanStep], bool] = lambda _step: True,
) -> bool:
    """True when, from the task's initial state, every step is allowed and its
    preconditions hold in turn, and the goal holds at the end."""
    state = set(task.init_atoms)
    for step in steps:
        if step.action not in task.actions or not allows(step):
            return False
        mapping = binding(task, step.action, step.args)
        if mapping is None or not precondition_holds(task, step.action, mapping, state):
            return False
        apply_effects(task, step.action, mapping, state)
    return holds(task, task.problem.goal, {}, state)


__all__ = [
    "added_atoms",
    "apply_effects",
    "binding",
    "failed_precondition",
    "ground",
    "needed_atoms",
    "precondition_holds",
    "replay",
]
