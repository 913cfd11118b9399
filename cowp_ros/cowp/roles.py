"""Roles in a domain: which actions an object's kind plays a part in, and which present
kinds could stand in for it. The loop asks the acquirer only about these."""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name


def role_actions(task: PlanningTask, role_type: str, first: Sequence[str] = ()) -> list[str]:
    """Actions with a parameter of `role_type`: those named in `first` (plan order), then
    the rest by name. Variants of another kind are left out: they are not the role."""
    having = [a for a in task.actions if role_type in task.parameter_types(a)]
    ordered = [a for a in dict.fromkeys(first) if a in having]
    return ordered + sorted(a for a in having if a not in ordered)


def candidate_types(
    task: PlanningTask, role_type: str, exclude: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(kind, an object of it) for each kind present that could stand in for `role_type`.

    A stand-in is a present object of another type with the same parent type (an item
    for an item, a place for a place) that plays no role in the domain's own actions
    (the faucet is not a candidate cup); kinds in `exclude` were tried already.
    """
    parent = task.types.get(role_type)
    role_types = {
        t for a in task.actions if a == base_action_name(a) for t in task.parameter_types(a)
    }
    found: dict[str, str] = {}
    for obj, obj_type in sorted(task.objects.items()):
        if obj_type == role_type or obj_type in role_types or obj_type in exclude:
            continue
        if task.types.get(obj_type) != parent:
            continue
        found.setdefault(obj_type, obj)
    return sorted(found.items())
