"""The no-model controls' loop: plan, execute, stop trusting objects after a failure.

A control ignores every sentence (a situation is a step that did not happen: it tries
the step again) and reads no judge: all it learns is that a step failed. Each control
decides which of the failed step's objects it stops trusting (`Distrust`); it then plans
again from the state it believes (its own successful steps) over a copy of the task in
which those objects may fill no parameter but a release step's (`_restricted`: a held
object can still be put down). It gives up when no plan is left, or after
`MAX_FAILURES` failures in a row with nothing left to distrust.

They measure what retrying alone reaches: a method's handling beyond them is what its
understanding adds.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import execute_retrying
from cowp_ros.bench.methods._restricted import compile_task
from cowp_ros.bench.view import Episode
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import apply_action, base_action_name
from cowp_ros.planning import Planner, PlanStep

MAX_FAILURES = 3

Distrust = Callable[[PlanningTask, PlanStep, Collection[str]], set[str]]
"""(task, failed step, objects distrusted so far) -> the objects to distrust now."""


class Avoiding:
    """Any object of the parameter's type, but none of `avoided` outside release steps."""

    def __init__(self, task: PlanningTask, avoided: Collection[str], release: Collection[str]):
        self.task = task
        self.avoided = set(avoided)
        self.release = set(release)

    def allowed(self, action: str, position: int, obj: str) -> bool:
        task = self.task
        if not task.is_subtype(task.objects[obj], task.parameter_types(action)[position]):
            return False
        return action in self.release or obj not in self.avoided


def control_run(
    episode: Episode,
    planner: Planner,
    release: Collection[str],
    distrust: Distrust,
    notes: list[str],
) -> None:
    """Run a control through the episode (see the module docstring)."""
    task = episode.problem
    avoided: set[str] = set()
    failures = 0
    while not episode.finished:
        planned = task if not avoided else compile_task(task, Avoiding(task, avoided, release))
        result = planner.solve(planned, 60.0)
        if not result.found or not result.steps:
            episode.give_up(f"no plan without {', '.join(sorted(avoided)) or 'anything'}")
            return
        notes.append("planned: " + ", ".join(str(s) for s in result.steps))
        for step in result.steps:
            outcome = execute_retrying(episode, step)
            if episode.finished:
                return
            if not outcome.executed:
                dropped = distrust(task, step, avoided)
                notes.append(f"{step} failed; no longer uses: {', '.join(sorted(dropped)) or '-'}")
                failures = 0 if dropped else failures + 1
                avoided |= dropped
                break
            task = apply_action(task, base_action_name(step.action), step.args)
        if failures >= MAX_FAILURES:
            episode.give_up(f"a step failed {failures} times with nothing left to change")
            return


class ControlMethod:
    """A no-model control as a benchmark method: a subclass names itself and sets
    `distrust`, the rule that picks which of a failed step's objects to stop using."""

    name = ""
    label = ""
    uses_llm = False
    summary = ""
    distrust: Distrust

    def __init__(self, context: MethodContext) -> None:
        self.context = context
        self.notes: list[str] = []

    def trace(self) -> list[str]:
        return list(self.notes)

    def run(self, episode: Episode) -> None:
        release = self.context.spec.release_actions
        control_run(episode, self.context.planner, release, type(self).distrust, self.notes)
