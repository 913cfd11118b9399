"""What a RunTask or ExecuteSkill goal may hold: checked before the goal is worked on.

The `task` field names a task, an alias, a dataset id or a short description; any ROS
peer can send a goal, and a 10 MB task name would be copied into every log line,
feedback message and report of the run. A goal past the bound is rejected at once, and
the task manager's log says why in one short line (the text itself is not repeated);
`TaskClient` checks the same before it sends, so a person gets the reason.

An ExecuteSkill step is one PDDL action: its name and each argument are PDDL names of
at most `MAX_IDENTIFIER_LENGTH` characters. The executor announces each step on
`/cowp/current_step` (which `cowp record` records) and logs it, so a step too large is
rejected at once (and not kept), and one with control characters or no name is ended
at once with a result naming the problem, before any of that.
"""

from __future__ import annotations

from typing import Any

from cowp_ros.limits import MAX_TASK_TEXT
from cowp_ros.pddl.identifiers import MAX_IDENTIFIER_LENGTH

MAX_STEP_ARGUMENTS = 32
"""Arguments of one ExecuteSkill step (a shipped action has at most 4)."""


def goal_problem(goal: Any) -> str | None:
    """Why `goal` (a RunTask goal) is refused, or None when it is acceptable."""
    task = goal.task
    if len(task) > MAX_TASK_TEXT:
        return (
            f"the goal's task is {len(task):,} characters, over the limit of {MAX_TASK_TEXT}: "
            "name a task (serve_water) or describe it in a few words"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in task):
        return "the goal's task holds control characters: name a task (serve_water)"
    return None


def step_size_problem(step: Any) -> str | None:
    """Why `step` is too large to keep (its name or an argument past
    `MAX_IDENTIFIER_LENGTH` characters, more than `MAX_STEP_ARGUMENTS` arguments), or
    None. Such a goal is rejected, not kept: an accepted goal stays in the action server
    for its result's lifetime, so a peer sending large ones could grow the executor.
    The message never repeats the oversized text."""
    if len(step.arguments) > MAX_STEP_ARGUMENTS:
        return (
            f"the step has {len(step.arguments):,} arguments, over the limit of "
            f"{MAX_STEP_ARGUMENTS}: send one PDDL action of a plan"
        )
    for index, name in enumerate([step.action, *step.arguments]):
        if len(name) > MAX_IDENTIFIER_LENGTH:
            what = "action name" if index == 0 else f"argument {index}"
            return (
                f"the step's {what} is {len(name):,} characters, over the limit of "
                f"{MAX_IDENTIFIER_LENGTH}: send one PDDL action of a plan"
            )
    return None


def step_problem(step: Any) -> str | None:
    """Why `step` (an ExecuteSkill goal's PlanStep) is refused, or None when it is
    acceptable: its size (`step_size_problem`), no action name, control characters."""
    size = step_size_problem(step)
    if size is not None:
        return size
    if not step.action:
        return "the step has no action name: send one PDDL action of a plan"
    for index, name in enumerate([step.action, *step.arguments]):
        if any(ord(c) < 32 or ord(c) == 127 for c in name):
            what = "action name" if index == 0 else f"argument {index}"
            return f"the step's {what} holds control characters: send PDDL names"
    return None
