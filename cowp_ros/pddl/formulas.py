"""Preconditions and effects: their literal conjuncts, and everything else kept whole.

COWP's edits (add a precondition, copy an action with a parameter retyped, apply an
action's effects to the state) work on conjunctions of literals, and a domain written
for a planner has more: equality, `forall`, `exists`, `or`, `when`, action costs. So a
formula is read as its top-level conjuncts: the literals an edit can reason about, and
the other parts, which an edit keeps beside its own and copies with the same
substitution (`substitute_formula`), never drops. `literals_of` is the strict reading
for code that needs nothing but literals, and says which construct it met.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pddl.logic.base import (
    And,
    ExistsCondition,
    ForallCondition,
    Formula,
    Imply,
    Not,
    OneOf,
    Or,
)
from pddl.logic.effects import Forall, When
from pddl.logic.functions import BinaryFunction, Increase, NumericFunction
from pddl.logic.predicates import EqualTo, Predicate
from pddl.logic.terms import Term, Variable


@dataclass(frozen=True)
class PddlLiteral:
    """A `pddl` predicate and whether it appears negated."""

    predicate: Predicate
    positive: bool = True

    def to_formula(self) -> Formula:
        return self.predicate if self.positive else Not(self.predicate)


def conjuncts_of(formula: Any) -> list[Any]:
    """The top-level conjuncts of a formula or effect (nested `and`s flattened)."""
    if formula is None:
        return []
    if isinstance(formula, And):
        result: list[Any] = []
        for operand in formula.operands:
            result.extend(conjuncts_of(operand))
        return result
    return [formula]


def as_literal(part: Any) -> PddlLiteral | None:
    """A conjunct as a literal of a predicate, or None (equality, quantifier, cost...)."""
    if isinstance(part, Predicate):
        return PddlLiteral(part, True)
    if isinstance(part, Not) and isinstance(part.argument, Predicate):
        return PddlLiteral(part.argument, False)
    return None


def top_literals(formula: Any) -> list[PddlLiteral]:
    """The literal conjuncts of a formula; its other conjuncts are left out."""
    return [lit for part in conjuncts_of(formula) if (lit := as_literal(part)) is not None]


def is_cost(part: Any) -> bool:
    """True for an action-cost effect, `(increase (total-cost) N)`."""
    return isinstance(part, Increase)


def construct_name(part: Any) -> str:
    """What a non-literal conjunct is, in PDDL's words, for a message."""
    names = [
        (EqualTo, "equality (=)"),
        (ForallCondition, "forall"),
        (ExistsCondition, "exists"),
        (Or, "or"),
        (Imply, "imply"),
        (OneOf, "oneof"),
        (When, "when (a conditional effect)"),
        (Forall, "forall (a quantified effect)"),
        (Increase, "increase (an action cost)"),
        (Not, "not of a formula"),
    ]
    if isinstance(part, Not) and isinstance(part.argument, EqualTo):
        return "inequality (not (= ...))"
    for kind, name in names:
        if isinstance(part, kind):
            return name
    return type(part).__name__


def literals_of(formula: Any) -> list[PddlLiteral]:
    """Flatten a conjunction of literals; ValueError naming anything else (action
    costs, which change no fact, are skipped)."""
    result = []
    for part in conjuncts_of(formula):
        literal = as_literal(part)
        if literal is not None:
            result.append(literal)
        elif not is_cost(part):
            raise ValueError(
                f"{construct_name(part)} in {part} is not a literal (only conjunctions of literals)"
            )
    return result


def conjunction(parts: Sequence[PddlLiteral | Any]) -> Any:
    """The conjunction of literals and other conjuncts (an empty `and` when none)."""
    formulas = [p.to_formula() if isinstance(p, PddlLiteral) else p for p in parts]
    if len(formulas) == 1:
        return formulas[0]
    return And(*formulas)


def substitute(literal: PddlLiteral, mapping: Mapping[str, Term]) -> PddlLiteral:
    """Replace terms by name (`?c` or `cup_1`) with the terms in `mapping`."""
    terms = [mapping.get(str(t), t) for t in literal.predicate.terms]
    return PddlLiteral(Predicate(literal.predicate.name, *terms), literal.positive)


def substitute_formula(formula: Any, mapping: Mapping[str, Term]) -> Any:
    """Any condition or effect with terms replaced by name, whole: quantified and
    conditional parts and action costs included. A quantifier's own variables hide
    the mapping's entries of the same name inside it."""
    if not mapping:
        return formula
    if isinstance(formula, Predicate):
        return Predicate(formula.name, *(mapping.get(str(t), t) for t in formula.terms))
    if isinstance(formula, EqualTo):
        return EqualTo(
            mapping.get(str(formula.left), formula.left),
            mapping.get(str(formula.right), formula.right),
        )
    if isinstance(formula, Not):
        return Not(substitute_formula(formula.argument, mapping))
    if isinstance(formula, And | Or | Imply | OneOf):
        return type(formula)(*(substitute_formula(op, mapping) for op in formula.operands))
    if isinstance(formula, ForallCondition | ExistsCondition):
        inner = _hidden(mapping, formula.variables)
        return type(formula)(substitute_formula(formula.condition, inner), formula.variables)
    if isinstance(formula, Forall):
        inner = _hidden(mapping, formula.variables)
        return Forall(substitute_formula(formula.effect, inner), formula.variables)
    if isinstance(formula, When):
        return When(
            substitute_formula(formula.condition, mapping),
            substitute_formula(formula.effect, mapping),
        )
    if isinstance(formula, NumericFunction):
        return NumericFunction(formula.name, *(mapping.get(str(t), t) for t in formula.terms))
    if isinstance(formula, BinaryFunction):
        return type(formula)(*(substitute_formula(op, mapping) for op in formula.operands))
    return formula


def _hidden(mapping: Mapping[str, Term], variables: Any) -> dict[str, Term]:
    bound = {str(v) for v in variables}
    return {k: v for k, v in mapping.items() if k not in bound}


def formula_variables(formula: Any) -> set[str]:
    """Every `?variable` a formula names, bound or free (for fresh names)."""
    found: set[str] = set()

    def visit(part: Any) -> None:
        if isinstance(part, Variable):
            found.add(str(part))
        elif isinstance(part, Predicate | NumericFunction):
            found.update(str(t) for t in part.terms if isinstance(t, Variable))
        elif isinstance(part, EqualTo):
            visit(part.left)
            visit(part.right)
        elif isinstance(part, Not):
            visit(part.argument)
        elif isinstance(part, And | Or | Imply | OneOf | BinaryFunction):
            for op in part.operands:
                visit(op)
        elif isinstance(part, ForallCondition | ExistsCondition):
            found.update(str(v) for v in part.variables)
            visit(part.condition)
        elif isinstance(part, Forall):
            found.update(str(v) for v in part.variables)
            visit(part.effect)
        elif isinstance(part, When):
            visit(part.condition)
            visit(part.effect)

    visit(formula)
    return found


def predicates_in(formula: Any) -> list[Predicate]:
    """Every predicate a formula names, anywhere in it (for type checks of a copy)."""
    found: list[Predicate] = []

    def visit(part: Any) -> None:
        if isinstance(part, Predicate):
            found.append(part)
        elif isinstance(part, Not):
            visit(part.argument)
        elif isinstance(part, And | Or | Imply | OneOf):
            for op in part.operands:
                visit(op)
        elif isinstance(part, ForallCondition | ExistsCondition):
            visit(part.condition)
        elif isinstance(part, Forall):
            visit(part.effect)
        elif isinstance(part, When):
            visit(part.condition)
            visit(part.effect)

    visit(formula)
    return found


def without_costs(effect: Any) -> Any:
    """An effect without its action costs (for a planner that reads no costs)."""
    parts = [p for p in conjuncts_of(effect) if not is_cost(p)]
    return conjunction(parts)
