"""Preconditions and effects as flat lists of literals, and back.

COWP's edits (add a precondition, copy an action with a parameter retyped, apply an
action's effects to the state) only ever need conjunctions of literals. Keeping every
formula in that shape makes each edit a list operation, and anything richer is refused
when the domain is loaded rather than half-handled later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pddl.logic.base import And, Formula, Not
from pddl.logic.predicates import Predicate
from pddl.logic.terms import Term


@dataclass(frozen=True)
class PddlLiteral:
    """A `pddl` predicate and whether it appears negated."""

    predicate: Predicate
    positive: bool = True

    def to_formula(self) -> Formula:
        return self.predicate if self.positive else Not(self.predicate)


def literals_of(formula: Formula | None) -> list[PddlLiteral]:
    """Flatten a conjunction of literals; raise ValueError for anything else."""
    if formula is None:
        return []
    if isinstance(formula, And):
        result: list[PddlLiteral] = []
        for operand in formula.operands:
            result.extend(literals_of(operand))
        return result
    if isinstance(formula, Predicate):
        return [PddlLiteral(formula, True)]
    if isinstance(formula, Not) and isinstance(formula.argument, Predicate):
        return [PddlLiteral(formula.argument, False)]
    raise ValueError(f"unsupported formula {formula} (only conjunctions of literals)")


def conjunction(literals: Sequence[PddlLiteral]) -> Formula:
    """The conjunction of `literals` (an empty `and` when there are none)."""
    formulas = [lit.to_formula() for lit in literals]
    if len(formulas) == 1:
        return formulas[0]
    return And(*formulas)


def substitute(literal: PddlLiteral, mapping: Mapping[str, Term]) -> PddlLiteral:
    """Replace terms by name (`?c` or `cup_1`) with the terms in `mapping`."""
    terms = [mapping.get(str(t), t) for t in literal.predicate.terms]
    return PddlLiteral(Predicate(literal.predicate.name, *terms), literal.positive)
