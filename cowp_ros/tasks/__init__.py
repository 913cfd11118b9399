"""Tasks: the registry (names, aliases, dataset ids -> PDDL files) and the English
phrases of their actions."""

from cowp_ros.tasks.registry import (
    TaskSpec,
    UnknownTaskError,
    all_tasks,
    get_task,
    pddl_dir,
    split_tasks,
    task_names,
    tasks_for_dataset,
)

__all__ = [
    "TaskSpec",
    "UnknownTaskError",
    "all_tasks",
    "get_task",
    "pddl_dir",
    "split_tasks",
    "task_names",
    "tasks_for_dataset",
]
