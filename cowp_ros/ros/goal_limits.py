"""What a RunTask or ExecuteSkill goal may hold: checked before the goal is worked on.

The `task` field names a task, an alias, a dataset id or a short description; any ROS
peer can send a goal, and a 10 MB task name would be copied into every log line,
feedback message and report of the run. A goal past the bound is rejected at once, and
the task manager's log says why in one short line (the text itself is not repeated);
`TaskClient` checks the same before it sends, so a person gets the reason.

An ExecuteSkill step is one PDDL action: its name and each argument are PDDL names of
at most `MAX_IDENTIFIER_LENGTH` characters. The executor announces each step on
`/cowp/current_step` (which `cowp record` records) and logs it, so a step past the
bound is ended at once, before any of that, with a result naming the bound.
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


def step_problem(step: Any) -> str | None:
    """Why `step` (an ExecuteSkill goal's PlanStep) is refused, or None when it is
    acceptable. The message never repeats the oversized text."""
    names = [step.action, *step.arguments[:MAX_STEP_ARGUMENTS]]
    if len(step.arguments) > MAX_STEP_ARGUMENTS:
        return (
            f"the step has {len(step.arguments):,} arguments, over the limit of "
            f"{MAX_STEP_ARGUMENTS}: send one PDDL action of a plan"
        )
    for index, name in enumerate(names):
        what = "action name" if index == 0 else f"argument {index}"
        if len(name) > MAX_IDENTIFIER_LENGTH:
            return (
                f"the step's {what} is {len(name):,} characters, over the limit of "
                f"{MAX_IDENTIFIER_LENGTH}: send one PDDL action of a plan"
            )
        if not name and index == 0:
            return "the step has no action name: send one PDDL action of a plan"
        if any(ord(c) < 32 or ord(c) == 127 for c in name):
            return f"the step's {what} holds control characters: send PDDL names"
    return None
