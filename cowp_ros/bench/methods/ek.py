"""External Knowledge (EK): a knowledge base from outside the robot, covering half the kinds.

The paper's EK baseline acquires commonsense from an external knowledge base instead of
asking an LLM, and such a base covers only part of the world. Here the external source
is the original COWP system's cached GPT-3 answers, published with the situation
dataset (`<dataset>/gpt3_answers/experience_task_<id>.txt`): EK declares them
(`outside_knowledge`) and the runner hands it the task's file as text, so EK needs no
path into the dataset, which its process cannot read. They are another system's
answers, not the judge's: they are often wrong ("fill a paper towel with water: yes"), as a
real external base is.

What EK knows about a kind K, from the task's file:

* stand-ins: the objects GPT-3 chose as "the most suitable to replace a K" (strongest),
  then those it said yes to for every action of K's role ("is it suitable that a robot
  holds a bowl?", "... fills a bowl with water from faucet?"), in that order;
* that a situation naming K makes the object unusable.

GPT-3's names are mapped to the domain's kinds by their head noun ("wine glass" ->
glass, "dish bowl" -> bowl, "frying pan" -> pan); names with no kind ("dish", "cutting
board") drop out. The knowledge base covers a random half of the task's object kinds
(drawn per trial with the method's seed for it): for a situation about an uncovered kind (or
about none) EK behaves as CW. It asks no language model.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

from cowp_ros.bench.methods import GPT3_ANSWERS, MethodContext
from cowp_ros.bench.methods._common import BelievedState
from cowp_ros.bench.view import Episode
from cowp_ros.cowp.roles import role_actions
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import PlanStep

_REPLACE = re.compile(
    r"such as (?P<candidates>.+?)\. which is the most suitable to replace an? (?P<kind>.+?) "
    r"in the task"
)
_SITUATION = re.compile(r"is it suitable that a robot .+? an? (?P<kind>[a-z ]+?) if the ")
_ACTION = re.compile(
    r"is it suitable that a robot \w+ an? (?P<object>[a-z ]+?)"
    r"(?: (?:with|into|on|onto|in|from|to|using|under|beside|for)\b.*)?\?$"
)


@dataclass
class KindKnowledge:
    """What the external source says about one kind (GPT-3's names, not yet mapped)."""

    chosen: Counter[str] = field(default_factory=Counter)
    all_yes: Counter[str] = field(default_factory=Counter)


def parse_answers(text: str) -> dict[str, KindKnowledge]:
    """GPT-3's name of a kind -> what its answers say about replacing that kind.

    The file is a sequence of `raw prompt:<question>` lines, each followed by GPT-3's
    answer. A block starts at a situation question ("... a cup if the cup is broken?"),
    asks about candidates for the cup's role, and ends with the "most suitable to
    replace a cup" question, whose answer names the chosen candidate.
    """
    found: dict[str, KindKnowledge] = {}
    current: str | None = None
    verdicts: dict[str, list[bool]] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if not line.startswith("raw prompt:"):
            continue
        question = line.removeprefix("raw prompt:").strip().lower()
        answer = lines[number + 1].strip().lower() if number + 1 < len(lines) else ""
        situation = _SITUATION.match(question)
        if situation:
            current, verdicts = situation.group("kind").strip(), {}
            continue
        replace = _REPLACE.search(question)
        if replace:
            kind = replace.group("kind").strip()
            knowledge = found.setdefault(kind, KindKnowledge())
            candidates = [c.strip() for c in replace.group("candidates").split(",")]
            named = [c for c in candidates if re.search(rf"\b{re.escape(c)}\b", answer)]
            if named:
                knowledge.chosen[max(named, key=len)] += 1
            if current == kind:
                for name, answers in verdicts.items():
                    if answers and all(answers):
                        knowledge.all_yes[name] += 1
            current, verdicts = None, {}
            continue
        action = _ACTION.match(question)
        if action and current is not None:
            verdicts.setdefault(action.group("object").strip(), []).append(answer.startswith("yes"))
    return found


def kind_of(name: str, kinds: set[str]) -> str | None:
    """A GPT-3 object name as one of the domain's kinds, by its head noun, or None."""
    words = name.lower().split()
    for candidate in ("_".join(words), words[-1] if words else ""):
        if candidate in kinds:
            return candidate
    return None


@cache
def knowledge_from(text: str) -> dict[str, KindKnowledge]:
    """The task's external knowledge from its answers file's text (see `parse_answers`)."""
    return parse_answers(text)


def stand_ins(knowledge: dict[str, KindKnowledge], kind: str, kinds: set[str]) -> list[str]:
    """The domain kinds the source offers for `kind`: chosen first, then all-yes ones."""
    about = [k for name, k in knowledge.items() if kind_of(name, kinds) == kind]
    chosen: Counter[str] = Counter()
    all_yes: Counter[str] = Counter()
    for k in about:
        for name, n in k.chosen.items():
            if (mapped := kind_of(name, kinds)) not in (None, kind):
                chosen[mapped] += n
        for name, n in k.all_yes.items():
            if (mapped := kind_of(name, kinds)) not in (None, kind):
                all_yes[mapped] += n
    ordered = [k for k, _ in chosen.most_common()]
    return ordered + [k for k, _ in all_yes.most_common() if k not in ordered]


class ExternalKnowledge:
    name = "ek"
    label = "EK"
    uses_llm = False
    summary = "external knowledge base (the original GPT-3 answers) on half the kinds; else CW"
    outside_knowledge = GPT3_ANSWERS

    def __init__(self, context: MethodContext) -> None:
        spec = context.spec
        if spec.dataset_id is None:
            raise CowpError(f"EK has no external knowledge for task {spec.name}")
        answers = context.options.get(GPT3_ANSWERS)
        if not answers:
            raise CowpError(
                f"EK needs its external knowledge base (the original system's "
                f"{GPT3_ANSWERS} for task {spec.name}) in context.options[{GPT3_ANSWERS!r}]",
                hint="the benchmark runner reads it from --dataset for a method that "
                "declares outside_knowledge",
            )
        self.context = context
        task = spec.load()
        kinds = sorted({task.objects[o] for o in spec.task_objects})
        share = math.ceil(len(kinds) / 2)  # half, rounded up: 2 of fill_cup's 3 kinds
        rng = random.Random(f"ek-{context.seed}")
        self.covered = frozenset(rng.sample(kinds, share))
        knowledge = knowledge_from(str(answers))
        all_kinds = set(task.types)
        self.substitutes = {
            kind: stand_ins(knowledge, kind, all_kinds) for kind in sorted(self.covered)
        }
        self.log: list[str] = [
            f"covers {kind}: stand-ins {subs or 'none known'}"
            for kind, subs in self.substitutes.items()
        ]

    def run(self, episode: Episode) -> None:
        task = episode.problem
        planner = self.context.planner
        believed = BelievedState(task)
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
                    changed = self._apply_knowledge(task, outcome.situation, handled, episode)
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
                believed.apply(step)
                task = edits.apply_action(task, step.action, step.args)
            if failures >= 3:
                episode.give_up(f"a step failed {failures} times")
                return

    def _apply_knowledge(
        self, task: PlanningTask, situation: str, handled: set[str], episode: Episode
    ) -> PlanningTask | None:
        """The task without the named covered object (and with the source's stand-ins in
        its role), or None when the situation is about no covered object."""
        words = " ".join(re.findall(r"[a-z]+", situation.lower()))
        for obj in self.context.spec.task_objects:
            kind = task.objects.get(obj)
            if kind is None or kind not in self.covered or obj in handled:
                continue
            if not re.search(rf"\b{kind.replace('_', ' ')}\b", words):
                continue
            if any(obj in atom.args for atom in task.goal_atoms):
                self.log.append(f"{situation!r}: the goal names {obj}; no stand-in can help")
                return None
            handled.add(obj)
            task = self._release(task, obj, episode)
            changed = edits.keep_objects(task, [o for o in task.problem_object_names if o != obj])
            present = {task.objects[o] for o in changed.problem_object_names}
            for new_kind in self.substitutes[kind]:
                # a stand-in of the same sort of thing only (an item for an item): GPT-3
                # offers a pan for the table, which no action of the table's role can take
                if new_kind not in present or task.types.get(new_kind) != task.types.get(kind):
                    continue
                for action in role_actions(changed, kind, list(task.actions)):
                    changed, _ = edits.add_action_variant(changed, action, kind, new_kind)
                self.log.append(f"{situation!r}: {obj} unusable; a {new_kind} takes its role")
                return changed.validated()
            self.log.append(f"{situation!r}: {obj} unusable; no known stand-in is present")
            return changed
        return None

    def _release(self, task: PlanningTask, obj: str, episode: Episode) -> PlanningTask:
        """Let go of `obj` first if the robot holds it (a release action that affords it)."""
        believed = BelievedState(task)
        places = sorted(task.problem_object_names)
        for action in self.context.spec.release_actions:
            if action not in task.actions:
                continue
            for place in places:
                step = PlanStep(action, (obj, place))
                if len(task.action(action).parameters) != 2 or not _fits(task, step):
                    continue
                if not believed.affords(step):
                    break
                if episode.execute(step).executed:
                    self.log.append(f"released {obj}: {step}")
                    return edits.apply_action(task, step.action, step.args)
                break
        return task

    def trace(self) -> list[str]:
        return list(self.log)


def _fits(task: PlanningTask, step: PlanStep) -> bool:
    types = task.parameter_types(step.action)
    return all(task.is_subtype(task.objects[a], t) for a, t in zip(step.args, types, strict=True))


METHOD = ExternalKnowledge
