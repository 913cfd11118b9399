"""What a condition means in a state, and what an effect does to it: PDDL's semantics
on sets of ground atoms, for the whole fragment this project reads.

Replaying a plan (tidying it, the benchmark's world, the oracle) and applying a step
that was executed (`edits.apply_action`) must agree with the planner about every
precondition and effect, equality, `forall`, `exists`, `or`, `imply` and conditional
effects included. Conditions of a conditional effect are read in the state before the
step, deletes are applied before adds, as PDDL says; action costs change no fact.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from pddl.logic.base import And, ExistsCondition, ForallCondition, Imply, Not, Or
from pddl.logic.effects import Forall, When
from pddl.logic.predicates import EqualTo, Predicate
from pddl.logic.terms import Term, Variable

from cowp_ros.pddl.formulas import is_cost
from cowp_ros.pddl.model import ROOT_TYPE, Atom

if TYPE_CHECKING:
    from cowp_ros.pddl.model import PlanningTask


class UnsupportedFormulaError(ValueError):
    """A formula this module does not evaluate (one the reader lets through)."""


def _name(term: Term, binding: Mapping[str, str]) -> str:
    text = str(term)
    return binding.get(text, text) if isinstance(term, Variable) else text


def ground_atom(predicate: Predicate, binding: Mapping[str, str]) -> Atom:
    """A predicate with its variables bound."""
    return Atom(predicate.name, tuple(_name(t, binding) for t in predicate.terms))


def _bindings(
    task: PlanningTask, variables: AbstractSet[Variable], binding: Mapping[str, str]
) -> Iterator[dict[str, str]]:
    """`binding` extended by every typed assignment of a quantifier's variables."""
    ordered = sorted(variables, key=str)
    domains = []
    for var in ordered:
        tags = [str(t) for t in var.type_tags] or [ROOT_TYPE]
        names = sorted({o for tag in tags for o in task.objects_of_type(tag)})
        domains.append(names)
    for values in itertools.product(*domains):
        yield {**binding, **{str(v): value for v, value in zip(ordered, values, strict=True)}}


def holds(
    task: PlanningTask, condition: Any, binding: Mapping[str, str], state: AbstractSet[Atom]
) -> bool:
    """True when `condition` (any precondition or goal of the fragment) holds in `state`."""
    if condition is None:
        return True
    if isinstance(condition, Predicate):
        return ground_atom(condition, binding) in state
    if isinstance(condition, EqualTo):
        return _name(condition.left, binding) == _name(condition.right, binding)
    if isinstance(condition, Not):
        return not holds(task, condition.argument, binding, state)
    if isinstance(condition, And):
        return all(holds(task, op, binding, state) for op in condition.operands)
    if isinstance(condition, Or):
        return any(holds(task, op, binding, state) for op in condition.operands)
    if isinstance(condition, Imply):
        first, second = condition.operands
        return not holds(task, first, binding, state) or holds(task, second, binding, state)
    if isinstance(condition, ForallCondition):
        return all(
            holds(task, condition.condition, inner, state)
            for inner in _bindings(task, condition.variables, binding)
        )
    if isinstance(condition, ExistsCondition):
        return any(
            holds(task, condition.condition, inner, state)
            for inner in _bindings(task, condition.variables, binding)
        )
    raise UnsupportedFormulaError(f"cannot evaluate {condition}")


def effect_changes(
    task: PlanningTask, effect: Any, binding: Mapping[str, str], state: AbstractSet[Atom]
) -> tuple[set[Atom], set[Atom]]:
    """The atoms an effect adds and deletes, its conditions read in `state`."""
    adds: set[Atom] = set()
    deletes: set[Atom] = set()

    def visit(part: Any, bound: Mapping[str, str]) -> None:
        if part is None or is_cost(part):
            return
        if isinstance(part, Predicate):
            adds.add(ground_atom(part, bound))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            deletes.add(ground_atom(part.argument, bound))
        elif isinstance(part, And):
            for op in part.operands:
                visit(op, bound)
        elif isinstance(part, When):
            if holds(task, part.condition, bound, state):
                visit(part.effect, bound)
        elif isinstance(part, Forall):
            for inner in _bindings(task, part.variables, bound):
                visit(part.effect, inner)
        else:
            raise UnsupportedFormulaError(f"cannot apply the effect {part}")

    visit(effect, binding)
    return adds, deletes


def apply_effect(
    task: PlanningTask, effect: Any, binding: Mapping[str, str], state: set[Atom]
) -> None:
    """Change `state` in place by an effect: deletes first, then adds."""
    adds, deletes = effect_changes(task, effect, binding, state)
    state -= deletes
    state |= adds


def effect_predicates(effect: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The predicate names an effect can make true and false, wherever they are in it."""
    adds: set[str] = set()
    deletes: set[str] = set()

    def visit(part: Any) -> None:
        if isinstance(part, Predicate):
            adds.add(str(part.name))
        elif isinstance(part, Not) and isinstance(part.argument, Predicate):
            deletes.add(str(part.argument.name))
        elif isinstance(part, And):
            for op in part.operands:
                visit(op)
        elif isinstance(part, When | Forall):
            visit(part.effect)

    visit(effect)
    return frozenset(adds), frozenset(deletes)


__all__ = [
    "UnsupportedFormulaError",
    "apply_effect",
    "effect_changes",
    "effect_predicates",
    "ground_atom",
    "holds",
]
