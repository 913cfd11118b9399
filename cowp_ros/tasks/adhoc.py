"""A task from a domain and a problem file alone, with no registry entry.

`cowp run --domain D --problem P` (and `cowp plan`) try a user's PDDL without writing a
tasks.yaml: the task's name is the problem's, its description the domain's name in
words, and its own objects those its goal names.
"""

from __future__ import annotations

import re
from pathlib import Path

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.tasks.registry import TaskSpec


def _task_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", text.strip().lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"task_{name}" if name else "task"
    return name[:60]


def adhoc_task(
    domain: str,
    problem: str,
    description: str | None = None,
    texts: tuple[str, str] | None = None,
) -> tuple[TaskSpec, PlanningTask]:
    """A task from a domain and a problem file, with no registry entry, and the task
    as read (from `texts`, the files' text when the caller has read them already:
    `cowp plan` gives Fast Downward the same text it checks).

    Its name is the problem's, its description `description` or the domain's name in
    words, and its own objects the ones its goal names (every other object of the
    problem is a possible stand-in). Actions are said in their own words.
    """
    domain_path, problem_path = Path(domain).expanduser(), Path(problem).expanduser()
    for flag, path in (("--domain", domain_path), ("--problem", problem_path)):
        if not path.is_file():
            raise CowpError(f"{flag} {path}: no such file", hint="give the path of a PDDL file")
    task = PlanningTask.load(domain_path, problem_path, texts)
    goal_objects = sorted({a for atom in task.goal_atoms for a in atom.args})
    name = _task_name(str(task.problem.name or problem_path.stem))
    spec = TaskSpec(
        name=name,
        description=description or str(task.domain.name).replace("_", " ").replace("-", " "),
        domain_path=domain_path.resolve(),
        problem_path=problem_path.resolve(),
        task_objects=tuple(goal_objects),
        phrases={},
    )
    return spec, task
