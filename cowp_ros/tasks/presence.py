"""One truth about what is present: the objects a run plans with, and the steps it refuses.

The planner must plan with the objects the world has, or the robot is sent for a
`mug_2` that was never there (the sim world had `mug_1` only; the grasp closed on
nothing, twice, and the run aborted). What the world has is said by the world: in the
simulation, sim_world's `world_objects` parameter (its scenario's objects); on the robot,
the configured `present_objects` (or whatever perception fills them with). This module is
the ROS-free part: which problem a run plans over, and whether a step names only objects
that are there. A step that names one that is not is refused before the robot moves,
with a reason that says which object and what the world does have.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import PddlEditError, keep_objects
from cowp_ros.planning import PlanStep


@dataclass(frozen=True)
class Presence:
    """The objects present for a run (None: not known, every object of the problem),
    and who said so ("sim_world", "the present_objects parameter", ...)."""

    objects: frozenset[str] | None
    source: str

    def absent(self, step: PlanStep) -> list[str]:
        """The step's arguments that are not present (none when presence is unknown)."""
        if self.objects is None:
            return []
        return [a for a in step.args if a not in self.objects]

    def refusal(self, step: PlanStep) -> str | None:
        """Why `step` must not run, or None when everything it names is present."""
        absent = self.absent(step)
        if not absent:
            return None
        assert self.objects is not None
        has = ", ".join(sorted(self.objects))
        names = ", ".join(absent)
        verb = "is" if len(absent) == 1 else "are"
        return f"refused {step}: {names} {verb} not in the world ({self.source} has {has})"


def present_problem(
    task: PlanningTask,
    task_objects: Sequence[str],
    *,
    world: Collection[str] | None,
    world_source: str,
    configured: Collection[str] = (),
) -> tuple[PlanningTask, Presence]:
    """The problem a run plans over, and what is present.

    `world`: the objects the world said it has (None: it said nothing). `configured`:
    the objects present besides the task's own, by configuration (empty: not set). With
    a world, the problem keeps the objects the world has (and, if configured too, only
    those among the configured ones and the task's own); with only a configuration, the
    task's own objects and the configured ones; with neither, the whole problem.
    """
    known = task.problem_object_names
    if world is not None:
        keep = set(world) & known
        source = world_source
        if configured:
            keep &= set(task_objects) | set(configured)
            source = f"{world_source} and the present_objects parameter"
    elif configured:
        unknown = sorted(set(configured) - known)
        if unknown:
            raise CowpError(
                f"present_objects names {', '.join(unknown)}, which the task's problem "
                "does not have",
                hint="name objects of the problem file",
            )
        keep = set(task_objects) | set(configured)
        source = "the present_objects parameter"
    else:
        return task, Presence(None, "the problem file")
    try:
        planned = keep_objects(task, keep)
    except PddlEditError as err:
        missing = sorted({a for atom in task.goal_atoms for a in atom.args} - keep)
        held = sorted(world) if world is not None else sorted(keep)  # what it does hold
        shown = ", ".join(held[:12]) + (f" and {len(held) - 12} more" if len(held) > 12 else "")
        raise CowpError(
            f"the world has no {', '.join(missing) or 'object the goal needs'}, which the "
            f"task's goal needs ({source} has {shown or 'nothing'})",
            hint="give the world this task's objects: a scenario of the task "
            "(sim_world.scenario=FILE with its objects; cowp demo --scenario FILE), "
            "or present_objects on the robot",
        ) from err
    constants = task.constants
    return planned, Presence(frozenset(keep | constants), source)
