"""Demonstrations from the robot's own domain: the dev tasks' closed-world plans.

The baselines' papers prompt with examples from the environment they are measured in
(LMZSP picks the most similar of VirtualHome's own programs, ProgPrompt shows programs of
other VirtualHome tasks): the examples teach the model the robot's granularity of
actions ("find the cup" before "grasp the cup", "walk to the table" before taking
something from it), which no household text outside the domain can show. Here the
examples are the closed-world plans of the benchmark's dev tasks, planned over each
task's own objects, never of a test task; a dev task sees only the other dev tasks, so
a dev figure is never measured on a task the prompt shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.tasks import TaskSpec, get_task, split_tasks
from cowp_ros.tasks.phrases import ActionPhrases

PLAN_SECONDS = 60.0


@dataclass(frozen=True)
class Demonstration:
    """One task of the domain solved: its description, plan, and that plan in English."""

    task: str
    description: str
    problem: PlanningTask
    steps: tuple[PlanStep, ...]
    sentences: tuple[str, ...]


_PLANS: dict[str, Demonstration] = {}


def demonstration_of(name: str, planner: Planner) -> Demonstration:
    """The task's closed-world plan over its own objects (planned once per process)."""
    if name not in _PLANS:
        spec = get_task(name)
        problem = spec.build_problem(n_objects=len(spec.task_objects))
        result = planner.solve(problem, PLAN_SECONDS)
        if not result.found:
            raise CowpError(
                f"the demonstration task {name!r} has no closed-world plan",
                hint="check its PDDL with `cowp plan` before using it as an example",
            )
        phrases = ActionPhrases(spec.phrases)
        sentences = tuple(phrases.describe(step, problem) for step in result.steps)
        _PLANS[name] = Demonstration(
            name, spec.description, problem, tuple(result.steps), sentences
        )
    return _PLANS[name]


def demonstrations_for(spec: TaskSpec, planner: Planner) -> list[Demonstration]:
    """The dev tasks' plans other than `spec`'s own, in the registry's order."""
    names = [name for name in split_tasks().get("dev", []) if name != spec.name]
    return [demonstration_of(name, planner) for name in names]
