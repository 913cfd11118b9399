"""A copy of a task whose action parameters take only the objects a rule allows.

The oracle plans over it with what its privileged access says (`oracle.Knowledge`); the
no-model controls (`retry`, `same_kind`) with the objects they stopped trusting after a
failed step. Each parameter of each action takes exactly the objects `allowed` there,
written as static `oracle_ok_<action>_<i>` facts, so one planner call finds a plan that
never uses an object where it is not allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import precondition_literals
from cowp_ros.pddl.formulas import literals_of
from cowp_ros.pddl.model import atom_of

OK_PREFIX = "oracle_ok"


class Allowance(Protocol):
    """Which object may fill which parameter of which action."""

    def allowed(self, action: str, position: int, obj: str) -> bool: ...


def ok_atoms(task: PlanningTask, allowance: Allowance, objects: Sequence[str]) -> set[Atom]:
    atoms = set()
    for action in task.actions:
        for i in range(len(task.parameter_types(action))):
            for obj in objects:
                if allowance.allowed(action, i, obj):
                    atoms.add(Atom(f"{OK_PREFIX}_{action}_{i}", (obj,)))
    return atoms


def compile_task(task: PlanningTask, allowance: Allowance) -> PlanningTask:
    """`task` (its state now) with each parameter restricted to the objects allowed there.

    A parameter keeps its declared type when only that kind is allowed, and takes the
    type's parent otherwise, so the planner grounds no more than it must.
    """
    objects = sorted(task.problem_object_names)
    ok = ok_atoms(task, allowance, objects)
    allowed_types: dict[tuple[str, int], str] = {}
    for action in task.actions:
        for i, role in enumerate(task.parameter_types(action)):
            kinds = {task.objects[a.args[0]] for a in ok if a.predicate == _ok(action, i)}
            wide = any(not task.is_subtype(k, role) for k in kinds)
            allowed_types[(action, i)] = task.types.get(role, role) if wide else role
    return PlanningTask.from_text(
        _domain_text(task, allowed_types), _problem_text(task, ok), f"oracle {task.source}"
    )


def _ok(action: str, position: int) -> str:
    return f"{OK_PREFIX}_{action}_{position}"


def _types_text(task: PlanningTask) -> str:
    by_parent: dict[str, list[str]] = {}
    for child, parent in task.types.items():
        by_parent.setdefault(parent, []).append(child)
    return "\n    ".join(f"{' '.join(sorted(c))} - {p}" for p, c in sorted(by_parent.items()))


def _atom_text(atom: Atom) -> str:
    return f"({' '.join([atom.predicate, *atom.args])})"


def _domain_text(task: PlanningTask, types: Mapping[tuple[str, int], str]) -> str:
    top = task.top_type(next(iter(task.types)))
    predicates = [
        f"({name} {' '.join(f'?x{i} - {t}' for i, t in enumerate(arg_types))})"
        for name, arg_types in sorted(task.predicates.items())
    ]
    actions = []
    for name in sorted(task.actions):
        action = task.action(name)
        params = [str(v) for v in action.parameters]
        pre = [
            _atom_text(lit.atom) if lit.positive else f"(not {_atom_text(lit.atom)})"
            for lit in precondition_literals(task, name)
        ]
        for i, var in enumerate(params):
            predicates.append(f"({_ok(name, i)} ?x - {top})")
            pre.append(f"({_ok(name, i)} {var})")
        effect = []
        for lit in literals_of(action.effect):
            text = _atom_text(atom_of(lit.predicate))
            effect.append(text if lit.positive else f"(not {text})")
        typed = " ".join(f"{v} - {types[(name, i)]}" for i, v in enumerate(params))
        actions.append(
            f"  (:action {name}\n    :parameters ({typed})\n"
            f"    :precondition (and {' '.join(pre)})\n    :effect (and {' '.join(effect)}))"
        )
    negative = any(
        not lit.positive for name in task.actions for lit in precondition_literals(task, name)
    )
    requirements = ":strips :typing" + (" :negative-preconditions" if negative else "")
    constants = ""
    if task.constants:
        constants = (
            "  (:constants "
            + " ".join(f"{c} - {task.objects[c]}" for c in sorted(task.constants))
            + ")\n"
        )
    return (
        f"(define (domain oracle_{task.domain.name})\n"
        f"  (:requirements {requirements})\n"
        f"  (:types\n    {_types_text(task)})\n{constants}"
        f"  (:predicates\n    {' '.join(predicates)})\n" + "\n".join(actions) + ")\n"
    )


def _problem_text(task: PlanningTask, ok: set[Atom]) -> str:
    objects = " ".join(f"{o} - {task.objects[o]}" for o in sorted(task.problem_object_names))
    init = " ".join(_atom_text(a) for a in sorted({*task.init_atoms, *ok}))
    goal = " ".join(_atom_text(a) for a in sorted(task.goal_atoms))
    return (
        f"(define (problem oracle_{task.problem.name})\n"
        f"  (:domain oracle_{task.domain.name})\n"
        f"  (:objects {objects})\n  (:init {init})\n  (:goal (and {goal})))\n"
    )
