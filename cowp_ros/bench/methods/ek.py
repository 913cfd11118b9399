"""External Knowledge (EK): a knowledge base that covers half of the objects.

The paper's EK baseline acquires commonsense from an external knowledge base instead of
an LLM, and its knowledge covers only part of the world. Here the knowledge base covers a
random half of the task's object kinds (drawn per trial with the trial's seed); for a
covered kind it knows (a) that a situation naming that kind makes the object unusable
and (b) which kinds of object can replace it, read from the task's judge file. So EK's
knowledge is correct wherever it exists: it is an upper bound on a curated knowledge
base of that coverage. For a situation about an uncovered kind (or none) it behaves as
CW. It asks no language model.
"""

from __future__ import annotations

import math
import random
import re

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.simulator import Episode
from cowp_ros.cowp.acquirer import role_actions
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask, edits


class ExternalKnowledge:
    name = "ek"
    label = "EK"
    uses_llm = False
    summary = "knowledge base covering half the object kinds; otherwise like CW"

    def __init__(self, context: MethodContext) -> None:
        if context.annotation is None:
            raise CowpError("EK needs the task's annotation file as its knowledge base")
        self.context = context
        spec = context.spec
        task = spec.load()
        kinds = sorted({task.objects[o] for o in spec.task_objects})
        share = math.ceil(len(kinds) / 2)  # half, rounded up: 2 of fill_cup's 3 kinds
        rng = random.Random(f"ek-{context.seed}")
        self.covered = frozenset(rng.sample(kinds, share))
        self.substitutes = {
            kind: sorted(context.annotation.acceptable.get(kind, ())) for kind in self.covered
        }

    def run(self, episode: Episode) -> None:
        task = episode.problem
        planner = self.context.planner
        handled: set[str] = set()
        failures = 0
        while not episode.finished:
            result = planner.solve(task, 60.0)
            if not result.found or not result.steps:
                episode.give_up("no plan with what the knowledge base knows")
                return
            for step in result.steps:
                outcome = episode.execute(step)
                if episode.finished:
                    return
                if outcome.situation is not None:
                    changed = self._apply_knowledge(task, outcome.situation, handled)
                    if changed is not None:
                        task = changed
                        break  # replan with the knowledge
                    outcome = episode.execute(step)  # not in the knowledge base: go on
                    if episode.finished:
                        return
                if not outcome.executed:
                    failures += 1  # like CW: replan from an unchanged state
                    break
                failures = 0
                task = edits.apply_action(task, step.action, step.args)
            if failures >= 3:
                episode.give_up(f"a step failed {failures} times")
                return

    def _apply_knowledge(
        self, task: PlanningTask, situation: str, handled: set[str]
    ) -> PlanningTask | None:
        """The task with the named covered object replaced, or None if not covered."""
        words = " ".join(re.findall(r"[a-z]+", situation.lower()))
        for obj in self.context.spec.task_objects:
            kind = task.objects.get(obj)
            if kind is None or kind not in self.covered or obj in handled:
                continue
            if not re.search(rf"\b{kind.replace('_', ' ')}\b", words):
                continue
            if any(obj in atom.args for atom in task.goal_atoms):
                return None  # the goal names it: no stand-in can help
            handled.add(obj)
            present = {task.objects[o] for o in task.problem_object_names}
            for new_kind in self.substitutes[kind]:
                if new_kind not in present:
                    continue
                plan_order = list(task.actions)
                changed = edits.keep_objects(
                    task, [o for o in task.problem_object_names if o != obj]
                )
                for action in role_actions(changed, kind, plan_order):
                    changed, _ = edits.add_action_variant(changed, action, kind, new_kind)
                return changed.validated()
            # covered, but no acceptable stand-in is present: the robot knows it is stuck
            return edits.keep_objects(task, [o for o in task.problem_object_names if o != obj])
        return None


METHOD = ExternalKnowledge
