"""Which object of the world is a situation about? Decided without a model.

A situation matters to a plan only through the objects it is about: "the cup is
broken" spoils whatever uses the cup, "a chair was moved in the living room" spoils
nothing the robot is going to touch. Grounding finds that object, in this order:

1. the source's word: the camera's detector says which object it watched
   (`Situation.object`, an object or a kind);
2. the kinds of the objects present that the sentence names, preferring a kind the
   remaining plan uses ("a fork, a knife and a spoon are inside the cup" is, for a robot
   about to fill the cup, about the cup), and within a kind the object the plan uses
   (`cup_2` when the plan took the second cup);
3. otherwise the world ("there is a power outage", "the dishwasher in the next room is
   running": no object of the task's world is named).

The outcome says which of these it was (`how`), so a monitor can treat a situation
about an object the plan never touches as harmless without asking anyone, and one
about the world with the suspicion it deserves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cowp_ros.cowp.situation import Situation
from cowp_ros.methods.paper.predicates import ARTICLES, SituationFact, slug, words_of
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import object_type

SOURCE = "source"
NAMED = "named"
WORLD = "world"


@dataclass(frozen=True)
class Grounding:
    """What a situation is about.

    `subject`: the object (None for the world). `kind`: its type. `how`: `source` (the
    situation's source named it), `named` (the sentence names its kind) or `world`.
    `in_plan`: the remaining plan uses the subject. `named_kinds`: every present kind
    the sentence names, in the order it names them (for the report).
    """

    subject: str | None
    kind: str | None
    how: str
    in_plan: bool
    named_kinds: tuple[str, ...] = ()

    def describe(self) -> str:
        """Words for the report: "about cup_1 (named), used by the plan"."""
        if self.subject is None:
            return "about the world (names no object present)"
        use = "used by the plan" if self.in_plan else "not used by the remaining plan"
        by = "its source said" if self.how == SOURCE else "named"
        return f"about {self.subject} ({by}), {use}"


def _kind_mentions(words: list[str], kinds: Iterable[str]) -> list[tuple[int, str]]:
    """(position, kind) of each kind the words name, longest names first at a position;
    a plural ("forks") names its kind too."""
    found: list[tuple[int, str]] = []
    ordered = sorted(set(kinds), key=lambda k: -len(k.split("_")))
    taken: set[int] = set()
    for start in range(len(words)):
        if start in taken:
            continue
        for kind in ordered:
            parts = kind.split("_")
            window = words[start : start + len(parts)]
            if len(window) != len(parts):
                continue
            last = window[-1]
            if window[:-1] == parts[:-1] and last in (parts[-1], parts[-1] + "s", parts[-1] + "es"):
                found.append((start, kind))
                taken.update(range(start, start + len(parts)))
                break
    return found


def plan_objects(steps: Sequence[PlanStep]) -> list[str]:
    """The objects the steps use, in plan order, each once."""
    return list(dict.fromkeys(arg for step in steps for arg in step.args))


def ground(situation: Situation, task: PlanningTask, plan: Sequence[str] = ()) -> Grounding:
    """The object `situation` is about; `plan` lists the objects the remaining plan uses,
    in plan order (the first of a kind is the one "the cup" means)."""
    present_kinds = {kind for kind in task.objects.values()}
    used = list(plan)

    def of_kind(kind: str) -> str | None:
        for name in used:
            if task.objects.get(name) == kind:
                return name
        objects = sorted(task.objects_of_type(kind)) if kind in task.types else []
        return objects[0] if objects else None

    words = words_of(situation.text)
    mentions = _kind_mentions(words, present_kinds)
    named = tuple(dict.fromkeys(kind for _, kind in mentions))
    given = situation.object
    if given:
        subject = given if given in task.objects else of_kind(given)
        if subject is not None:
            kind = object_type(subject, task)
            return Grounding(subject, kind, SOURCE, subject in used, named)
    in_plan = [kind for kind in named if any(task.objects.get(o) == kind for o in used)]
    chosen = in_plan[0] if in_plan else (named[0] if named else None)
    if chosen is None:
        return Grounding(None, None, WORLD, False, named)
    subject = of_kind(chosen)
    return Grounding(subject, chosen, NAMED, subject in used, named)


def fact_of(
    situation: Situation,
    grounding: Grounding,
    task: PlanningTask,
    reserved: frozenset[str] = frozenset(),
) -> SituationFact:
    """The situation as a fact about its grounded object (no model asked).

    The sentence less the subject's kind and articles names the predicate: "the cup is
    broken" -> (is_broken cup_1); a world situation is a fact without arguments
    ("there is a power outage" -> (there_is_power_outage)). A name the domain already
    uses for its own state (or with another arity) is prefixed with `situation_`.
    """
    words = [w for w in words_of(situation.text) if w not in ARTICLES]
    if grounding.kind is not None:
        parts = grounding.kind.split("_")
        for start in range(len(words) - len(parts) + 1):
            if words[start : start + len(parts)] == parts:
                words = words[:start] + words[start + len(parts) :]
                break
    arity = 0 if grounding.subject is None else 1
    name = slug(words) or ("unexpected_situation" if arity == 0 else "is_affected")
    existing = task.predicates.get(name)
    if name in reserved or (existing is not None and len(existing) != arity):
        name = f"situation_{name}"[:40]
    if grounding.subject is None:
        return SituationFact(situation.text, Atom(name), None, "world", grounding.describe())
    atom = Atom(name, (grounding.subject,))
    return SituationFact(situation.text, atom, grounding.subject, "grounding", grounding.describe())


class GroundedFacts:
    """The `FactMaker` port from grounding alone: no model is ever asked.

    `focus` (the failing step's objects first, then the plan's) decides which object of
    a kind "the cup" means; a sentence that names no object present becomes a fact
    about the world.
    """

    def __init__(self, reserved: frozenset[str] = frozenset()) -> None:
        self.reserved = reserved

    def generate(
        self, situation: Situation, task: PlanningTask, focus: Sequence[str] = ()
    ) -> SituationFact:
        seen = Situation.of(situation)
        return fact_of(seen, ground(seen, task, list(dict.fromkeys(focus))), task, self.reserved)
