"""The bounds a commonsense request must keep before the node asks the model anything.

Any ROS peer can call `/cowp/check_plan` and `/cowp/acquire_knowledge`. A request is
refused at once, with a message naming the bound, when it carries too many candidates,
steps or names, or text past its size; and every name in it (candidate kinds and their
example objects, the role, the actions, the steps, the focus objects) must pass the
PDDL identifier grammar, because the node sends some of them back (`accepted`,
`chosen`) and the caller writes those into PDDL: a name like `mug) (:action evil` is
refused coming in, as the model's names are.

An AcquireKnowledge request is also checked against the PDDL it is about (its own, or
the registered task's) before any question: the role is a type of the domain, each role
action is one of its actions and takes a parameter of the role's type, each candidate
kind is a declared type other than the role's, and, with the request's own PDDL, each
example is an object of its kind. A peer's `spaceship` is refused, not asked about.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.limits import (
    MAX_CANDIDATES,
    MAX_NAMES,
    MAX_SITUATION_TEXT,
    MAX_STEPS,
    MAX_TASK_TEXT,
    check_count,
    check_size,
)
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.identifiers import check_identifier

MAX_DESCRIPTION = 2000


def _names(values: Iterable[str], what: str) -> None:
    for value in values:
        check_identifier(value, what)


def _common(request: Any) -> None:
    check_size(request.task, MAX_TASK_TEXT, "the task name")
    check_size(request.task_description, MAX_DESCRIPTION, "the task description")
    check_size(request.situation, MAX_SITUATION_TEXT, "the situation")
    check_count(len(request.phrase_actions), MAX_NAMES, "phrase rules")
    check_count(len(request.phrase_templates), MAX_NAMES, "phrase rules")
    _names(request.phrase_actions, "phrase action")


def check_check_plan(request: Any) -> None:
    """Refuse a CheckPlan request past a bound or holding a name that is not one."""
    _common(request)
    check_count(len(request.steps), MAX_STEPS, "plan steps")
    check_count(len(request.focus_objects), MAX_NAMES, "focus objects")
    for step in request.steps:
        check_count(len(step.arguments), MAX_NAMES, "step arguments")
        _names([step.action, *step.arguments], "step name")
    _names(request.focus_objects, "focus object")
    if request.situation_object:
        check_identifier(request.situation_object, "situation object")


def check_acquire(request: Any) -> None:
    """Refuse an AcquireKnowledge request past a bound or holding a name that is not one."""
    _common(request)
    check_count(len(request.candidate_types), MAX_CANDIDATES, "candidate kinds")
    check_count(len(request.candidate_examples), MAX_CANDIDATES, "candidate examples")
    check_count(len(request.actions), MAX_NAMES, "role actions")
    if request.role_type:
        check_identifier(request.role_type, "role type")
    _names(request.actions, "role action")
    _names(request.candidate_types, "candidate kind")
    _names(request.candidate_examples, "candidate example")


def check_acquire_fits(request: Any, task: PlanningTask) -> None:
    """Refuse an AcquireKnowledge request whose role, actions or candidates are not
    those of `task` (the PDDL the request is about); see the module docstring."""
    types = task.types
    role = request.role_type
    if role and role not in types:
        raise CowpError(
            f"role type {role!r} is not a type of the request's domain",
            hint=f"its types: {_shown(types)}",
        )
    if not request.select_only:
        for action in request.actions:
            if action not in task.actions:
                raise CowpError(
                    f"role action {action!r} is not an action of the request's domain",
                    hint=f"its actions: {_shown(task.actions)}",
                )
            if role not in task.parameter_types(action):
                raise CowpError(
                    f"role action {action!r} takes no parameter of the role type {role!r}",
                    hint="name the actions the role's object takes part in",
                )
    objects = task.objects
    for kind, example in zip(request.candidate_types, request.candidate_examples, strict=False):
        if kind == role:
            raise CowpError(f"refused candidate kind {kind!r}: it is the role's own type")
        if kind not in types:
            raise CowpError(
                f"refused candidate kind {kind!r}: not a type of the request's domain",
                hint=f"its types: {_shown(types)}",
            )
        if request.domain_pddl and not (
            example in objects and task.is_subtype(objects[example], kind)
        ):
            raise CowpError(
                f"refused candidate example {example!r}: not an object of kind {kind!r} "
                "in the request's problem"
            )


def _shown(names: Iterable[str], most: int = 20) -> str:
    listed = sorted(names)
    more = f", ... ({len(listed) - most} more)" if len(listed) > most else ""
    return ", ".join(listed[:most]) + more
