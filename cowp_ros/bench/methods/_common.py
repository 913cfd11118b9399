"""Helpers the baselines share: admissible actions in English, text -> action mapping.

LMZSP and Inner Monologue let the model write actions in free text and map each to the
most similar admissible action, as Huang et al. do. The original mapped with sentence
embeddings (Sentence-RoBERTa); we map by string and word similarity (the mean of
difflib's ratio and the Jaccard overlap of content words), which needs no embedding
model: "fill the bowl with water" still lands on `fill_cup(bowl_1, faucet_1)`.

Admissible actions are the task's actions over the objects present, typed as the domain
says, plus every grounding with one argument swapped for a present object of the same
kind of thing (an item for an item): that is how a free-text plan can use a bowl as a
cup. The simulator and the judge then decide whether that works and is acceptable.
"""

from __future__ import annotations

import difflib
import itertools
import re
from dataclasses import dataclass

from cowp_ros.bench.simulator import Episode, StepOutcome
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import apply_action
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.tasks.phrases import ActionPhrases, noun, object_type

STOP_WORDS = frozenset({"the", "a", "an", "to", "of", "with", "from", "on", "in", "into", "it"})
MAX_ADMISSIBLE = 4000


@dataclass(frozen=True)
class Admissible:
    step: PlanStep
    text: str
    words: frozenset[str]
    objects: frozenset[str]  # the object nouns it names ("bowl", "faucet")
    swapped: frozenset[str] = frozenset()  # noun of the swapped-in object, if any


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP_WORDS)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def similarity(
    a: str,
    b: str,
    b_words: frozenset[str] | None = None,
    objects: tuple[frozenset[str], frozenset[str]] | None = None,
) -> float:
    """See the module docstring; `objects` is (nouns named in a, nouns named in b)."""
    wa, wb = content_words(a), b_words if b_words is not None else content_words(b)
    ratio = difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
    if objects is None:
        return (ratio + _jaccard(wa, wb)) / 2
    named, used = objects
    covered = len(named & used) / len(named) if named else 0.0
    return 0.25 * ratio + 0.25 * _jaccard(wa, wb) + 0.5 * covered


def admissible_actions(task: PlanningTask, phrases: ActionPhrases) -> list[Admissible]:
    """Typed groundings plus one-argument swaps within the same kind (see module doc)."""
    objects = sorted(task.problem_object_names)
    steps: dict[PlanStep, str] = {}  # step -> the swapped-in object ("" when typed)
    for name in sorted(task.actions):
        types = task.parameter_types(name)
        typed = [[o for o in objects if task.is_subtype(task.objects[o], t)] for t in types]
        for args in itertools.product(*typed):
            steps[PlanStep(name, tuple(args))] = ""
            for i, t in enumerate(types):
                parent = task.types.get(t)
                for other in objects:
                    if other != args[i] and task.types.get(task.objects[other]) == parent:
                        swapped = (*args[:i], other, *args[i + 1 :])
                        steps.setdefault(PlanStep(name, swapped), other)
        if len(steps) > MAX_ADMISSIBLE:
            break
    found = []
    for step, other in steps.items():
        text = phrases.describe(step, task)
        nouns = frozenset(
            w for arg in step.args for w in content_words(noun(object_type(arg, task), ""))
        )
        swap = content_words(noun(object_type(other, task), "")) if other else frozenset()
        found.append(Admissible(step, text, content_words(text), nouns, swap))
    return found


def best_match(text: str, admissible: list[Admissible]) -> tuple[Admissible, float]:
    """The admissible action most similar to `text`, and its score."""
    vocabulary = frozenset().union(*(a.objects for a in admissible))
    named = content_words(text) & vocabulary
    scored = (
        (
            similarity(text, a.text, a.words, (named, a.objects))
            - (0.2 if a.swapped and not a.swapped & named else 0.0),
            a,
        )
        for a in admissible
    )
    score, best = max(scored, key=lambda pair: (round(pair[0], 9), not pair[1].swapped))
    return best, score


def execute_retrying(episode: Episode, step: PlanStep) -> StepOutcome:
    """Attempt `step`; if a situation interrupted it, attempt it once more (ignoring it)."""
    outcome = episode.execute(step)
    if outcome.situation is not None and not episode.finished:
        outcome = episode.execute(step)
    return outcome


def closed_world_run(
    episode: Episode, planner: Planner, task: PlanningTask, *, max_failures: int = 3
) -> None:
    """Plan, execute, replan from what the robot knows on any failure; never learn.

    What the robot knows is the PDDL state after its own successful steps; a situation
    it cannot interpret is ignored, and a failed step is replanned from the unchanged
    state, which gives the same plan: after `max_failures` failures in a row it gives up.
    """
    failures = 0
    while not episode.finished:
        result = planner.solve(task, 60.0)
        if not result.found:
            episode.give_up(f"no plan ({result.status.value})")
            return
        if not result.steps:
            episode.give_up("the plan is empty but the goal does not hold")
            return
        for step in result.steps:
            outcome = execute_retrying(episode, step)
            if episode.finished:
                return
            if not outcome.executed:
                failures += 1
                break
            failures = 0
            task = apply_action(task, step.action, step.args)
        if failures >= max_failures:
            episode.give_up(f"the same step failed {failures} times")
            return
