"""The no-model controls' loop: plan, execute, stop trusting objects after a failure.

A control reads no judge and understands no sentence. The failure controls (retry,
same_kind) ignore every sentence (a situation is a step that did not happen: they try
the step again) and learn only that a step failed; the noun-only control reads one
thing in a sentence, the nouns, and drops the plan's objects of a kind it names
(`Reads`). Each control decides which of the failed step's objects it stops trusting
(`Distrust`); it then plans
again from the state it believes (its own successful steps) over a copy of the task in
which those objects may fill no parameter but a release step's (`_restricted`: a held
object can still be put down). It gives up when no plan is left, or after
`MAX_FAILURES` failures in a row with nothing left to distrust.

They measure what retrying alone reaches: a method's handling beyond them is what its
understanding adds.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import MAX_SENTENCES_AT_A_STEP
from cowp_ros.bench.methods._restricted import compile_task
from cowp_ros.bench.view import Episode
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import apply_action, base_action_name
from cowp_ros.planning import Planner, PlanStep

MAX_FAILURES = 3

Distrust = Callable[[PlanningTask, PlanStep, Collection[str]], set[str]]
"""(task, failed step, objects distrusted so far) -> the objects to distrust now."""

Reads = Callable[[PlanningTask, str, Sequence[PlanStep], Collection[str]], set[str]]
"""(task, sentence, the plan's steps from the one it was seen before, objects dropped
so far) -> the objects to drop for it (none: the sentence is ignored)."""


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
    reads: Reads | None = None,
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
        for at, step in enumerate(result.steps):
            outcome = episode.execute(step)
            named: set[str] = set()
            # Every sentence before the step is read (or ignored) in turn; the step is
            # tried again after each: two sentences at one step are no failed step.
            for _ in range(MAX_SENTENCES_AT_A_STEP):
                if outcome.situation is None or episode.finished:
                    break
                if reads is not None:
                    named = reads(task, outcome.situation, result.steps[at:], avoided)
                    if named:
                        notes.append(f"{outcome.situation!r}: no longer uses {sorted(named)}")
                        break
                outcome = episode.execute(step)
            if episode.finished:
                return
            if named:
                avoided |= named
                failures = 0
                break
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
    `distrust`, the rule that picks which of a failed step's objects to stop using, and
    `reads` when it reads the sentences' nouns (None: it ignores every sentence)."""

    name = ""
    label = ""
    uses_llm = False
    summary = ""
    distrust: Distrust
    reads: Reads | None = None

    def __init__(self, context: MethodContext) -> None:
        self.context = context
        self.notes: list[str] = []

    def trace(self) -> list[str]:
        return list(self.notes)

    def run(self, episode: Episode) -> None:
        release = self.context.spec.release_actions
        cls = type(self)
        control_run(episode, self.context.planner, release, cls.distrust, self.notes, cls.reads)
