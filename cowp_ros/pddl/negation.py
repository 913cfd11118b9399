"""Compile negative preconditions away, for planners that only read STRIPS (pyperplan).

COWP's monitor adds preconditions such as `(not (is_dirty ?c))`. pyperplan accepts only
positive preconditions, so each negated predicate `p` gets a complement `not_p` that is
true in the initial state for every well-typed tuple where `p` is false, kept in step
with `p` by every effect that changes `p`, and used in place of `(not (p ...))`. The
result has exactly the same plans. Fast Downward reads the original. The complement's
name never clashes with a declared predicate (see `complement_name`).

pyperplan reads no action costs either: its copy leaves them out (`strips_copy`), so its
plans are the shortest it finds rather than the cheapest. Anything else beyond STRIPS
(equality, quantifiers, disjunction, conditional effects) is refused by name, with the
action it is in: Fast Downward plans with those.
"""

from __future__ import annotations

import itertools
import math

from pddl.action import Action
from pddl.core import Domain, Problem
from pddl.logic.predicates import Predicate
from pddl.logic.terms import Constant
from pddl.requirements import Requirements

from cowp_ros.limits import MAX_COMPLEMENT_FACTS, LimitError
from cowp_ros.pddl.formulas import PddlLiteral, conjunction, conjuncts_of, is_cost, literals_of
from cowp_ros.pddl.identifiers import MAX_IDENTIFIER_LENGTH
from cowp_ros.pddl.model import PddlLoadError, PlanningTask, atom_of

COMPLEMENT_PREFIX = "not_"


def complement_name(taken: set[str], predicate: str) -> str:
    """A name for the complement of `predicate` that no predicate in `taken` has.

    `not_p` when free; a situation can already have made it a predicate of its own
    ("the cup not dirty" is `(not_dirty cup_1)`), so then `not_p_2`, `not_p_3`, ...
    The complement lives only in the compiled copy a STRIPS planner reads, so its name
    never reaches a plan.
    """
    name = f"{COMPLEMENT_PREFIX}{predicate}"
    number = 2
    while name in taken:
        name = f"{COMPLEMENT_PREFIX}{predicate}_{number}"
        number += 1
    if len(name) > MAX_IDENTIFIER_LENGTH:
        raise PddlLoadError(
            f"cannot compile (not ({predicate} ...)) for a STRIPS planner: no free name "
            f"for its complement within {MAX_IDENTIFIER_LENGTH} characters"
        )
    return name


def negated_predicates(task: PlanningTask) -> set[str]:
    """Predicates that appear negated in some action precondition or in the goal."""
    negated = {
        lit.predicate.name
        for action in task.domain.actions
        for lit in literals_of(action.precondition)
        if not lit.positive
    }
    negated |= {lit.predicate.name for lit in literals_of(task.problem.goal) if not lit.positive}
    return negated


def complement_fact_count(task: PlanningTask, negated: set[str] | None = None) -> int:
    """How many `(not_p ...)` facts the STRIPS copy would list: for each negated
    predicate, the product of the objects each of its arguments may take. Counted from
    the object counts alone, so it costs nothing however large the answer."""
    predicates = task.predicates
    total = 0
    for predicate in negated_predicates(task) if negated is None else negated:
        arg_types = predicates.get(predicate, ())
        total += math.prod(len(task.objects_of_type(t)) for t in arg_types)
    return total


def check_complements(task: PlanningTask, limit: int = MAX_COMPLEMENT_FACTS) -> int:
    """The count `complement_fact_count` gives; LimitError, naming the predicate that
    costs most, when it is past `limit` (0: no limit)."""
    negated = negated_predicates(task)
    count = complement_fact_count(task, negated)
    if limit and count > limit:
        costs = {p: complement_fact_count(task, {p}) for p in negated}
        worst = max(sorted(costs), key=lambda p: costs[p])
        arity = len(task.predicates.get(worst, ()))
        raise LimitError(
            f"refused to plan: its negated conditions would list {count:,} complement "
            f"facts, over the limit of {limit:,} ((not ({worst} ...)) has {arity} "
            f"arguments over {len(task.objects)} objects: {costs[worst]:,} tuples)",
            hint="negate predicates of fewer arguments, or plan with fewer objects; a task "
            "of this project lists a few hundred",
        )
    return count


def check_strips(task: PlanningTask, planner: str = "pyperplan") -> None:
    """Refuse, naming the construct and the action, a task that is not STRIPS with
    negative literals and action costs (what `strips_copy` can hand a STRIPS planner)."""
    actions = sorted(task.domain.actions, key=lambda a: str(a.name))  # a set: name order
    parts = [(f"action {a.name!r} precondition", a.precondition) for a in actions]
    parts += [(f"action {a.name!r} effect", a.effect) for a in actions]
    parts.append(("the goal", task.problem.goal))
    for where, formula in parts:
        try:
            literals_of(formula)
        except ValueError as err:
            raise PddlLoadError(
                f"{planner} reads STRIPS only: {where} has {err}",
                hint="plan with Fast Downward (--planner fast_downward), which reads it",
            ) from None
    if task.domain.derived_predicates:
        raise PddlLoadError(
            f"{planner} reads STRIPS only: the domain has derived predicates (:derived)",
            hint="plan with Fast Downward (--planner fast_downward), which reads them",
        )


def strips_copy(task: PlanningTask) -> PlanningTask:
    """The task as a STRIPS planner reads it: no negative preconditions, no action
    costs (see the module docstring); `check_strips` first."""
    check_strips(task)
    if not task.has_action_costs and not task.domain.functions:
        return compile_negative_preconditions(task)
    return compile_negative_preconditions(task, drop_costs=True)


def compile_negative_preconditions(task: PlanningTask, *, drop_costs: bool = False) -> PlanningTask:
    """An equivalent task without negative preconditions (the task itself if it has none
    and no costs are to be dropped)."""
    negated = negated_predicates(task)
    if not negated and not drop_costs:
        return task
    check_complements(task)
    taken = set(task.predicates)
    complements: dict[str, str] = {}
    for predicate in sorted(negated):
        complements[predicate] = complement_name(taken, predicate)
        taken.add(complements[predicate])

    def rewrite_condition(literals: list[PddlLiteral]) -> list[PddlLiteral]:
        out = []
        for lit in literals:
            name = lit.predicate.name
            if not lit.positive and name in complements:
                out.append(PddlLiteral(Predicate(complements[name], *lit.predicate.terms)))
            else:
                out.append(lit)
        return out

    def rewrite_effect(literals: list[PddlLiteral]) -> list[PddlLiteral]:
        out = list(literals)
        for lit in literals:
            name = lit.predicate.name
            if name in complements:
                mirrored = Predicate(complements[name], *lit.predicate.terms)
                out.append(PddlLiteral(mirrored, not lit.positive))
        return out

    actions = [
        Action(
            a.name,
            parameters=a.parameters,
            precondition=conjunction(rewrite_condition(literals_of(a.precondition))),
            effect=conjunction(
                [
                    *rewrite_effect(literals_of(a.effect)),
                    *([] if drop_costs else [p for p in conjuncts_of(a.effect) if is_cost(p)]),
                ]
            ),
        )
        for a in task.domain.actions
    ]
    declared = {p.name: p for p in task.domain.predicates}
    predicates = [
        *task.domain.predicates,
        *(Predicate(complements[p], *declared[p].terms) for p in complements),
    ]
    true_now = task.init_atoms
    init = list(task.problem.init)
    for predicate, complement in complements.items():
        arg_types = task.predicates[predicate]
        candidates = [task.objects_of_type(t) for t in arg_types]
        true_args = {atom.args for atom in true_now if atom.predicate == predicate}
        for args in itertools.product(*candidates):
            if args not in true_args:
                init.append(Predicate(complement, *(Constant(a) for a in args)))
    requirements = set(task.domain.requirements) - {Requirements.NEG_PRECONDITION}
    if drop_costs:
        requirements -= {Requirements.ACTION_COSTS, Requirements.NUMERIC_FLUENTS}
        init = [f for f in init if isinstance(f, Predicate)]
    domain = Domain(
        task.domain.name,
        requirements=requirements,
        types=dict(task.domain.types),
        constants=task.domain.constants,
        predicates=predicates,
        functions=None if drop_costs else task.domain.functions,
        actions=actions,
    )
    goal_literals = rewrite_condition(literals_of(task.problem.goal))
    problem = Problem(
        task.problem.name,
        domain=domain,
        objects=task.problem.objects,
        init=init,
        goal=conjunction(goal_literals),
        metric=None if drop_costs else task.problem.metric,
    )
    compiled = PlanningTask.build(
        domain, problem, f"{task.source} (STRIPS compiled)", task.hidden_requirements
    )
    assert all(atom_of(f).predicate for f in compiled.problem.init)
    return compiled
