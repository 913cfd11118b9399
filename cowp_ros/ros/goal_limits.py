"""What a RunTask goal may hold: checked by the task manager before it accepts one.

The `task` field names a task, an alias, a dataset id or a short description; any ROS
peer can send a goal, and a 10 MB task name would be copied into every log line,
feedback message and report of the run. A goal past the bound is rejected at once, and
the task manager's log says why in one short line (the text itself is not repeated);
`TaskClient` checks the same before it sends, so a person gets the reason.
"""

from __future__ import annotations

from typing import Any

from cowp_ros.limits import MAX_TASK_TEXT


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
