"""What one planning call may cost: its grounding size, checked first, and its memory.

A planner grounds every action over every object its parameters may take before it
searches. An action of 6 parameters over 30 objects is 729 million ground actions: the
grounding grows by tens of megabytes a second until the machine runs out. So the
grounding size is counted from the task before any planner starts (a product of
counts, no grounding), and each planner process runs under an address-space limit
(RLIMIT_AS, `process.run_with_deadline`, inherited by Fast Downward's translator and
search): past it, the process fails to allocate and the call ends with an error that
names the budget.
"""

from __future__ import annotations

import math

from cowp_ros.limits import MAX_GROUND_ACTIONS, LimitError
from cowp_ros.pddl import PlanningTask

OUT_OF_MEMORY_EXIT = 75
"""The pyperplan worker's exit code when it could not allocate (a MemoryError)."""


def ground_action_count(task: PlanningTask) -> int:
    """Ground actions before pruning: per action, the product of the number of objects
    (and constants) each parameter may take, summed over the actions."""
    total = 0
    for name in task.actions:
        counts = [len(task.objects_of_type(t)) for t in task.parameter_types(name)]
        total += math.prod(counts)
    return total


def check_grounding(task: PlanningTask, limit: int = MAX_GROUND_ACTIONS) -> int:
    """The task's ground action count; LimitError when it is past `limit` (0: no limit)."""
    count = ground_action_count(task)
    if limit and count > limit:
        worst = max(
            task.actions,
            key=lambda a: math.prod(len(task.objects_of_type(t)) for t in task.parameter_types(a)),
        )
        arity = len(task.parameter_types(worst))
        raise LimitError(
            f"refused to plan: the problem grounds {count:,} actions, over the limit of "
            f"{limit:,} (action {worst!r} has {arity} parameters over "
            f"{len(task.objects)} objects)",
            hint="fewer parameters per action or fewer objects; a task of this project "
            "grounds a few thousand",
        )
    return count


def out_of_memory_message(memory_mb: int, peak_mb: float | None = None) -> str:
    """What a planner that hit its memory budget says."""
    peak = f", peak {peak_mb:.0f} MB" if peak_mb else ""
    return (
        f"the planner ran out of its {memory_mb} MB memory budget{peak}: the problem "
        "grounds too many actions or states; plan with fewer objects or simpler actions"
    )
