"""Roles in a domain: which actions an object's kind plays a part in, and which present
kinds could stand in for it. The loop asks the acquirer only about these."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.pddl.semantics import effect_predicates


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


_HELD = re.compile(r"hold|held|carr|in_hand|grasp", re.IGNORECASE)
"""Predicate names that say the robot has an object in hand (holding, carrying, ...)."""


def held_without_release(task: PlanningTask, subject: str | None) -> str:
    """Why no stand-in can be used while the robot holds the original, in words, or "".

    A stand-in has to be picked up, and the hand holds the blocked object: when no
    action of the domain but those that do the task's own work (their effects reach the
    goal, as watering the plant does) makes it no longer held, no plan frees the hand,
    and the true cause of "no stand-in" is the missing put-down action.
    """
    if subject is None:
        return ""
    held = sorted(
        atom for atom in task.init_atoms if subject in atom.args and _HELD.search(atom.predicate)
    )
    goal = {atom.predicate for atom in task.goal_atoms}
    released: set[str] = set()
    for action in task.actions.values():
        adds, deletes = effect_predicates(action.effect)
        if not adds & goal:
            released |= deletes
    for atom in held:
        if atom.predicate not in released:
            return (
                f"the robot holds {subject} ({atom}) and the domain has no action to put it "
                f"down (only actions that do the task's work end {atom.predicate}), so its "
                "hand cannot take a stand-in"
            )
    return ""
