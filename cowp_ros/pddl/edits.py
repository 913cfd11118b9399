"""The changes COWP makes to a planning task, each returning a new, valid task.

- `add_precondition`: the Plan Monitor found an action unsuitable in a situation; the
  situation's predicate, negated, becomes a precondition of that action.
- `add_fact` / `remove_fact`: the situation holds now, so the state says so.
- `add_object` / `keep_objects`: which objects are present.
- `promote_to_constant`: a situation about an object that is not an argument of the
  failing action can only be named inside the action if the object is a constant.
- `add_action_variant`: the Knowledge Acquirer learned that another type of object can
  take a role ("a bowl can also be filled"): copy the action with that parameter retyped.
- `apply_action`: a step was executed; its effects change the state replanning starts
  from.

Every function checks names against the identifier grammar and the domain's own
vocabulary, and rebuilds the `pddl` objects through their constructors, which type-check
them; `PlanningTask.write` reparses the text on top of that.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pddl.action import Action
from pddl.core import Domain, Problem
from pddl.logic.functions import Increase
from pddl.logic.predicates import Predicate
from pddl.logic.terms import Constant, Term, Variable
from pddl.requirements import Requirements

from cowp_ros.errors import CowpError
from cowp_ros.pddl.formulas import (
    PddlLiteral,
    conjunction,
    conjuncts_of,
    predicates_in,
    substitute_formula,
    top_literals,
)
from cowp_ros.pddl.identifiers import check_identifier
from cowp_ros.pddl.model import ROOT_TYPE, Atom, Literal, PddlLoadError, PlanningTask, atom_of
from cowp_ros.pddl.semantics import UnsupportedFormulaError, apply_effect

VARIANT_MARK = "__"


class PddlEditError(CowpError):
    """An edit that would make the task invalid (unknown action, object, type...)."""


def variant_name(action_name: str, role_type: str, new_type: str) -> str:
    """`fill_cup` with the cup's role given to a bowl: `fill_cup__cup_as_bowl`.

    The role is part of the name because one action can have several roles to fill
    (`pour_coke` has the coke's and the glass's) and a variant can be varied again
    (`pour_coke__coke_as_beer__glass_as_mug`): each name says exactly what it holds.
    """
    return f"{action_name}{VARIANT_MARK}{role_type}_as_{new_type}"


def base_action_name(action_name: str) -> str:
    """The domain's own action a variant descends from (itself for a base action)."""
    return action_name.split(VARIANT_MARK, 1)[0]


# ---- rebuilding -------------------------------------------------------------------


def _rebuild(
    task: PlanningTask,
    *,
    requirements: Collection[Requirements] | None = None,
    constants: Collection[Constant] | None = None,
    predicates: Collection[Predicate] | None = None,
    actions: Collection[Action] | None = None,
    objects: Collection[Constant] | None = None,
    init: Collection[Predicate] | None = None,
    reveal: Collection[str] = (),
) -> PlanningTask:
    """A new task with some parts replaced; the `pddl` constructors re-check types.

    `reveal`: requirements the edit needs declared in the text it writes, also where
    the reader had added them for the library alone (`PlanningTask.hidden_requirements`).
    """
    old_domain, old_problem = task.domain, task.problem
    try:
        domain = Domain(
            old_domain.name,
            requirements=(requirements if requirements is not None else old_domain.requirements),
            types=dict(old_domain.types),
            constants=constants if constants is not None else old_domain.constants,
            predicates=predicates if predicates is not None else old_domain.predicates,
            derived_predicates=old_domain.derived_predicates,
            functions=old_domain.functions,
            actions=actions if actions is not None else old_domain.actions,
        )
        problem = Problem(
            old_problem.name,
            domain=domain,
            objects=objects if objects is not None else old_problem.objects,
            init=init if init is not None else old_problem.init,
            goal=old_problem.goal,
            metric=old_problem.metric,
        )
    except (ValueError, TypeError, AssertionError) as err:
        raise PddlEditError(f"the edit would make {task.domain.name!r} invalid: {err}") from err
    hidden = task.hidden_requirements - set(reveal)
    return PlanningTask.build(domain, problem, task.source, hidden)


def _check_object(task: PlanningTask, name: str) -> str:
    check_identifier(name, "object")
    if name not in task.objects:
        known = ", ".join(sorted(task.objects))
        raise PddlEditError(f"unknown object {name!r}", hint=f"known objects: {known}")
    return name


# ---- predicates and facts ---------------------------------------------------------


def declare_predicate(task: PlanningTask, name: str, arg_types: Sequence[str]) -> PlanningTask:
    """Declare `name` over `arg_types` unless a predicate of that name exists.

    An existing predicate must have the same arity: a model answer that reuses a name
    with another arity would silently mean something else.
    """
    check_identifier(name, "predicate")
    existing = task.predicates.get(name)
    if existing is not None:
        if len(existing) != len(arg_types):
            raise PddlEditError(
                f"predicate {name!r} takes {len(existing)} argument(s), not {len(arg_types)}"
            )
        return task
    for type_name in arg_types:
        if type_name not in task.types and type_name != ROOT_TYPE:
            raise PddlEditError(f"unknown type {type_name!r} for predicate {name!r}")
    # `object` is written as no type at all: the `pddl` library lists only declared types
    terms = [Variable(f"x{i}", [t] if t != ROOT_TYPE else []) for i, t in enumerate(arg_types)]
    return _rebuild(task, predicates=[*task.domain.predicates, Predicate(name, *terms)])


def _declared_for(task: PlanningTask, atom: Atom, types: Sequence[str]) -> PlanningTask:
    """Declare the atom's predicate, if it is new, over the type that holds every object
    (`PlanningTask.fact_type`), so that any later fact may reuse it."""
    if atom.predicate in task.predicates:
        return declare_predicate(task, atom.predicate, types)  # checks the arity
    return declare_predicate(task, atom.predicate, [task.fact_type for _ in types])


def _check_arg_types(task: PlanningTask, atom: Atom, types: Sequence[str]) -> None:
    declared_types = task.predicates[atom.predicate]
    for arg, arg_type, declared in zip(atom.args, types, declared_types, strict=True):
        if not task.is_subtype(arg_type, declared):
            raise PddlEditError(
                f"{atom}: {arg} is a {arg_type}, but {atom.predicate} takes a {declared}"
            )


def add_fact(task: PlanningTask, atom: Atom) -> PlanningTask:
    """Make `atom` true in the initial state (declaring its predicate if new)."""
    for arg in atom.args:
        _check_object(task, arg)
    types = [task.objects[a] for a in atom.args]
    task = _declared_for(task, atom, types)
    _check_arg_types(task, atom, types)
    if atom in task.init_atoms:
        return task
    fact = Predicate(atom.predicate, *(Constant(a) for a in atom.args))
    return _rebuild(task, init=[*task.problem.init, fact])


def remove_fact(task: PlanningTask, atom: Atom) -> PlanningTask:
    """Make `atom` false in the initial state."""
    kept = [f for f in task.problem.init if not isinstance(f, Predicate) or atom_of(f) != atom]
    return _rebuild(task, init=kept)


def add_precondition(task: PlanningTask, action_name: str, literal: Literal) -> PlanningTask:
    """Add `literal` to the precondition of `action_name`, beside whatever the action
    already requires (a quantified, disjunctive or conditional part stays as it is,
    one more conjunct beside it).

    Arguments are the action's parameters (`?c`) or domain constants. A negative literal
    adds the `:negative-preconditions` requirement; planners that lack it (pyperplan)
    get a compiled copy from `cowp_ros.pddl.negation`.
    """
    action = task.action(action_name)
    params = {str(v): v for v in action.parameters}
    terms: list[Term] = []
    types: list[str] = []
    for arg in literal.atom.args:
        if arg in params:
            terms.append(params[arg])
            tags = sorted(str(t) for t in params[arg].type_tags)
            types.append(tags[0] if len(tags) == 1 else ROOT_TYPE)
        elif arg in task.constants:
            terms.append(Constant(arg))
            types.append(task.objects[arg])
        else:
            raise PddlEditError(
                f"{literal} names {arg!r}, which is neither a parameter of {action_name} "
                f"({', '.join(params) or 'none'}) nor a domain constant"
            )
    task = _declared_for(task, literal.atom, types)
    _check_arg_types(task, literal.atom, types)
    action = task.action(action_name)
    new_literal = PddlLiteral(Predicate(literal.atom.predicate, *terms), literal.positive)
    current = conjuncts_of(action.precondition)
    if any(str(c) == str(new_literal.to_formula()) for c in current):
        return task
    changed = Action(
        action.name,
        parameters=action.parameters,
        precondition=conjunction([*current, new_literal]),
        effect=action.effect,
    )
    requirements = set(task.domain.requirements)
    if not literal.positive:
        requirements.add(Requirements.NEG_PRECONDITION)
    actions = [changed if a.name == action_name else a for a in task.domain.actions]
    reveal = () if literal.positive else (":negative-preconditions",)
    return _rebuild(task, requirements=requirements, actions=actions, reveal=reveal)


def precondition_literals(task: PlanningTask, action_name: str) -> list[Literal]:
    """The literal conjuncts of an action's precondition as `Literal`s (arguments as
    `?var` or constants); equality, quantified and disjunctive parts are not literals
    and are left out (`semantics.holds` reads the whole precondition)."""
    return [
        Literal(atom_of(lit.predicate), lit.positive)
        for lit in top_literals(task.action(action_name).precondition)
    ]


# ---- objects ----------------------------------------------------------------------


def add_object(task: PlanningTask, name: str, type_name: str) -> PlanningTask:
    """Add an object of a declared type to the problem."""
    check_identifier(name, "object")
    if name in task.objects:
        raise PddlEditError(f"object {name!r} already exists")
    if type_name not in task.types:
        known = ", ".join(sorted(task.types))
        raise PddlEditError(f"unknown type {type_name!r}", hint=f"known types: {known}")
    return _rebuild(task, objects=[*task.problem.objects, Constant(name, type_name)])


def promote_to_constant(task: PlanningTask, name: str) -> PlanningTask:
    """Move a problem object into the domain's constants so actions can name it."""
    _check_object(task, name)
    if name in task.constants:
        return task
    type_name = task.objects[name]
    objects = [o for o in task.problem.objects if o.name != name]
    constants = [*task.domain.constants, Constant(name, type_name)]
    return _rebuild(task, constants=constants, objects=objects)


def keep_objects(task: PlanningTask, keep: Collection[str]) -> PlanningTask:
    """Drop every problem object not in `keep`, with the facts that mention it.

    The goal must not mention a dropped object: that would make the task unsolvable for
    a reason that has nothing to do with the open world.
    """
    keep = set(keep)
    unknown = keep - set(task.objects)
    if unknown:
        raise PddlEditError(f"unknown objects to keep: {', '.join(sorted(unknown))}")
    dropped = {o.name for o in task.problem.objects} - keep
    in_goal = {a for atom in task.goal_atoms for a in atom.args} & dropped
    if in_goal:
        raise PddlEditError(f"cannot drop {', '.join(sorted(in_goal))}: the goal needs them")
    objects = [o for o in task.problem.objects if o.name in keep]
    init = [f for f in task.problem.init if not set(_names_in(f)) & dropped]
    return _rebuild(task, objects=objects, init=init)


# ---- acquired knowledge -----------------------------------------------------------


def add_action_variant(
    task: PlanningTask, action_name: str, role_type: str, new_type: str
) -> tuple[PlanningTask, str]:
    """Copy `action_name` with every parameter of `role_type` retyped to `new_type`.

    This is how "a bowl can also be filled" enters the domain: `fill_cup__cup_as_bowl` has
    the same preconditions (including any the monitor added) and effects as `fill_cup`,
    with the bowl in the cup's place, quantified and conditional parts copied whole.
    An action cost that names the role's object (`(increase (total-cost) (distance
    ?cup ?to))`) has no value for the new kind's objects: that copy cannot be made, and
    the error says so. Returns the new task and the variant's name.
    """
    check_identifier(new_type, "type")
    if new_type not in task.types:
        raise PddlEditError(f"unknown type {new_type!r}")
    action = task.action(action_name)
    if role_type not in task.parameter_types(action_name):
        raise PddlEditError(f"{action_name} has no parameter of type {role_type!r}")
    name = variant_name(action_name, role_type, new_type)
    check_identifier(name, "action")
    if name in task.actions:
        return task, name
    mapping: dict[str, Term] = {}
    parameters: list[Variable] = []
    for var in action.parameters:
        if role_type in var.type_tags:
            retyped = Variable(var.name, [new_type])
            mapping[str(var)] = retyped
            parameters.append(retyped)
        else:
            parameters.append(var)
    precondition = substitute_formula(action.precondition, mapping)
    effect = substitute_formula(action.effect, mapping)
    for part in conjuncts_of(action.effect):
        if isinstance(part, Increase) and {str(v) for v in mapping} & _names_in(part):
            raise PddlEditError(
                f"cannot put a {new_type} in the {role_type}'s role in {action_name}: its "
                f"action cost {part} names the {role_type}, and the problem gives no cost "
                f"for a {new_type}"
            )
    for predicate in (*predicates_in(precondition), *predicates_in(effect)):
        atom = atom_of(predicate)
        declared = task.predicates[atom.predicate]
        for arg, arg_type in zip(atom.args, declared, strict=True):
            if arg in mapping and not task.is_subtype(new_type, arg_type):
                raise PddlEditError(
                    f"cannot put a {new_type} in the {role_type}'s role in {action_name}: "
                    f"predicate {atom.predicate} takes a {arg_type}"
                )
    variant = Action(name, parameters=parameters, precondition=precondition, effect=effect)
    return _rebuild(task, actions=[*task.domain.actions, variant]), name


# ---- execution --------------------------------------------------------------------


def apply_action(task: PlanningTask, action_name: str, args: Sequence[str]) -> PlanningTask:
    """The task whose initial state is the state after executing one step.

    Deletes are applied before adds, as PDDL says, and a conditional effect's condition
    is read in the state before the step (`semantics`). Preconditions are not checked:
    the robot reports what it did, and the state must follow what happened.
    """
    action = task.action(action_name)
    if len(args) != len(action.parameters):
        raise PddlEditError(
            f"{action_name} takes {len(action.parameters)} argument(s), got {len(args)}"
        )
    for arg in args:
        _check_object(task, arg)
    binding = {str(v): a for v, a in zip(action.parameters, args, strict=True)}
    state = set(task.init_atoms)
    try:
        apply_effect(task, action.effect, binding, state)
    except UnsupportedFormulaError as err:
        raise PddlEditError(f"cannot apply {action_name}: {err}") from err
    if state == set(task.init_atoms):
        return task
    numeric = [f for f in task.problem.init if not isinstance(f, Predicate)]
    init = [Predicate(a.predicate, *(Constant(x) for x in a.args)) for a in sorted(state)]
    return _rebuild(task, init=[*init, *numeric])


def _names_in(formula: object) -> set[str]:
    """The names (objects, `?variables`) a fact, cost or numeric fact mentions."""
    found: set[str] = set()
    terms = getattr(formula, "terms", None)
    if terms is not None:
        found.update(str(t) for t in terms)
    for operand in getattr(formula, "operands", ()):
        found |= _names_in(operand)
    return found


__all__ = [
    "PddlEditError",
    "PddlLoadError",
    "add_action_variant",
    "add_fact",
    "add_object",
    "add_precondition",
    "apply_action",
    "base_action_name",
    "declare_predicate",
    "keep_objects",
    "precondition_literals",
    "promote_to_constant",
    "remove_fact",
    "variant_name",
]
