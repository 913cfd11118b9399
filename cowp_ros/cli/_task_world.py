"""A sim world made from a task's own problem, for a task that has no scenario file.

sim_world plays a scenario: its objects are the world the task manager plans in. A task
of one's own (`--tasks`) has no scenario, and a sim started with another task's would
hold none of its objects. So `cowp bringup --task NAME` (and `cowp demo --task NAME`)
write the world of the task's problem as a scenario with no events: every object of
the problem, at the named location the executor would drive to for it (the same rule:
a location of robot.yaml by its name or kind, else `location_aliases`, else the task's
`object_locations`), graspable where the domain lets the robot hold its kind (the
parameters of a `holding`-like predicate). Situations then come from `cowp task situation`.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.resources import share_path
from cowp_ros.skills.config import load_robot_config
from cowp_ros.skills.roles import with_tasks
from cowp_ros.skills.skill_map import load_skill_map
from cowp_ros.skills.world import Whereabouts, object_class
from cowp_ros.tasks import all_tasks, get_task

_HELD = re.compile(r"hold|held|carr|in_hand|grasp", re.IGNORECASE)


def task_world(task_name: str) -> dict[str, object]:
    """The scenario of `task_name`'s problem (see the module docstring), as YAML data."""
    spec = get_task(task_name)
    task = spec.load()
    robot_path = share_path("config", "robot.yaml")
    skills_path = share_path("config", "skills.yaml")
    robot = load_robot_config(robot_path)
    skills = with_tasks(load_skill_map(skills_path), all_tasks().values())
    world = Whereabouts(
        set(robot.base.locations),
        location_aliases=skills.location_aliases,
        object_locations=skills.object_locations,
        sources=(skills_path, robot_path),
    )
    places = set(robot.base.locations) | set(skills.location_aliases)
    held_types = {
        kind
        for predicate, kinds in task.predicates.items()
        if _HELD.search(predicate)
        for kind in kinds
    }
    objects: dict[str, dict[str, object]] = {}
    for raw_name, raw_kind in sorted(task.objects.items()):
        name, kind = str(raw_name), str(raw_kind)  # the PDDL library's name type: plain text
        try:
            location = world.location_of(name) if object_class(name) != name else None
            if location is None:
                location = world.location_of(kind)
        except CowpError as err:
            raise CowpError(
                f"task {spec.name}: no location for {name} ({kind}) in a world made from "
                f"its problem: {err.message}",
                hint=f"add '{kind}: LOCATION' to object_locations of {spec.name} in its "
                f"tasks.yaml (locations: {', '.join(sorted(robot.base.locations))}), or "
                "give the sim a scenario file of the task",
            ) from None
        entry: dict[str, object] = {"class": kind.replace("_", " "), "location": location}
        if not _graspable(task, name, kind, held_types, places):
            entry["attributes"] = {"graspable": False}
        objects[name] = entry
    return {
        "name": f"{spec.name}_world",
        "task": spec.name,
        "description": f"the world of {spec.name}'s problem, made with no scenario file",
        "objects": objects,
        "events": [],
    }


def _graspable(
    task: PlanningTask, name: str, kind: str, held_types: set[str], places: set[str]
) -> bool:
    """Whether the hand may close on it: what the domain lets the robot hold (a kind of
    the parameters of its `holding`-like predicates), else anything that is not a place."""
    if held_types:
        return any(task.is_subtype(kind, held) for held in held_types)
    return object_class(name) not in places and kind not in places


def write_task_world(task_name: str, folder: Path) -> Path:
    """Write `task_world(task_name)` as a scenario file in `folder`; its absolute path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / f"{get_task(task_name).name}_world.yaml").absolute()
    path.write_text(yaml.safe_dump(task_world(task_name), sort_keys=False))
    return path
