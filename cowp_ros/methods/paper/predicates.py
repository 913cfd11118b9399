"""Situation sentences -> predicates over the domain's own objects.

"the cup is dirty" -> (is_dirty cup_1). Rules go first because they are deterministic
and cannot inject anything: the subject is found by matching the domain's object types
in the sentence, and the rest of the sentence becomes the predicate name. Only when no
known object is named, and a model is available, the model is asked (`complete`) for a
"predicate object" pair; its answer must pass the identifier grammar, name an object the
problem has, and carry no PDDL syntax, or it is refused with a reason kept in the report.

A situation that names no known object becomes a nullary predicate about the world
("there is a power outage" -> (there_is_power_outage)): the documented fallback, which
blocks the failing action for every argument.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.answers import SituationFact
from cowp_ros.cowp.situation import Situation
from cowp_ros.cowp.wording import find_mention, words_of
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.identifiers import (
    RESERVED_WORDS,
    UnsafeIdentifierError,
    check_identifier,
    has_pddl_syntax,
)

ARTICLES = frozenset({"the", "a", "an", "some", "this", "that"})
MAX_PREDICATE_WORDS = 6
DANGLING_WORDS = frozenset(
    {"and", "or", "but", "nor", "of", "in", "into", "on", "onto", "at", "by", "for", "from",
     "to", "with", "without", "its", "their", "his", "her", "our", "my", "your", "is", "are",
     "was", "were", "be", "been", "has", "have", "had", "not", "no", "than", "as", "so"}
)  # fmt: skip
"""Words a predicate name never ends on once cut to its length: a phrase cut after "and"
or "its" reads as half a thought (`has_crack_in_its_bottom_and`)."""
PREDICATE_NAME_LIMIT = 40

PREDICATE_SYSTEM = (
    "You turn a household situation into a planning predicate. Reply with exactly two "
    "words: a predicate name in snake_case, then one object name from the list."
)
PREDICATE_EXAMPLES = (
    Example("Objects: knife_1, stove_1. Situation: the knife is rusty.", "is_rusty knife_1"),
    Example("Objects: fridge_1, milk_1. Situation: the milk went sour.", "went_sour milk_1"),
)


def slug(words: Sequence[str]) -> str:
    """Words -> a predicate name within the identifier grammar (possibly empty)."""
    every = [w for w in words if w not in ARTICLES]
    kept = every[:MAX_PREDICATE_WORDS]
    while len("_".join(kept)) > PREDICATE_NAME_LIMIT and len(kept) > 1:
        kept.pop()
    if len(kept) < len(every):  # cut: end on a word that closes a phrase
        while len(kept) > 1 and kept[-1] in DANGLING_WORDS:
            kept.pop()
    name = "_".join(kept)
    name = name[:PREDICATE_NAME_LIMIT]
    if name and not name[0].isalpha():
        name = f"n_{name}"
    if name in RESERVED_WORDS:
        name = f"is_{name}"
    return name


def resolve_object(mention: str, task: PlanningTask, focus: Sequence[str]) -> str | None:
    """The object a mention means: itself, else the focus object of that type, else the
    first present object of that type (None when none is present)."""
    if mention in task.objects:
        return mention
    of_type = task.objects_of_type(mention) if mention in task.types else []
    for name in focus:
        if name in of_type:
            return name
    return of_type[0] if of_type else None


def parse_model_predicate(
    answer: str, task: PlanningTask, reserved: frozenset[str] = frozenset()
) -> Atom:
    """Validate a model's "predicate object" answer; raise `UnsafeIdentifierError`.

    Nothing is repaired: an answer with PDDL syntax, an unknown object, a bad name, extra
    words, or a name in `reserved` (the domain's own state predicates, which a situation
    must never overwrite: "holding cup_1" would change what the robot holds) is refused.
    """
    text = answer.strip()
    first_line = text.splitlines()[0].strip() if text else ""
    if has_pddl_syntax(text):
        raise UnsafeIdentifierError(
            f"refused the model's predicate {first_line[:80]!r}: it contains PDDL syntax"
        )
    parts = first_line.split()
    if len(parts) != 2 or len(text.splitlines()) > 1:
        raise UnsafeIdentifierError(
            f"refused the model's predicate {text[:80]!r}: expected 'predicate object'"
        )
    predicate = check_identifier(parts[0], "predicate")
    if len(predicate) > PREDICATE_NAME_LIMIT:
        raise UnsafeIdentifierError(
            f"refused the model's predicate {predicate[:40]!r}...: longer than "
            f"{PREDICATE_NAME_LIMIT} characters"
        )
    obj = check_identifier(parts[1], "object")
    if obj not in task.objects:
        raise UnsafeIdentifierError(
            f"refused the model's predicate {first_line!r}: no object {obj!r} in the problem"
        )
    if predicate in reserved:
        raise UnsafeIdentifierError(
            f"refused predicate {predicate!r}: it is one of the domain's own state predicates"
        )
    known = task.predicates.get(predicate)
    if known is not None and len(known) != 1:
        raise UnsafeIdentifierError(
            f"refused predicate {predicate!r}: the domain's {predicate} takes {len(known)} "
            "argument(s)"
        )
    return Atom(predicate, (obj,))


class PredicateGenerator:
    """Turns situation sentences into `SituationFact`s for one task's vocabulary."""

    def __init__(
        self, model: LanguageModel | None = None, reserved: frozenset[str] = frozenset()
    ) -> None:
        """`reserved`: the domain's own predicates, which situation facts must not reuse."""
        self.model = model
        self.reserved = reserved

    def generate(
        self, situation: Situation | str, task: PlanningTask, focus: Sequence[str] = ()
    ) -> SituationFact:
        """The fact for `situation`; `focus` lists objects to prefer (the failing step's).

        When the situation's source named its object (the camera's detector watched
        `cup_1`), that object is the subject, whatever else the sentence names ("a fork
        is in the cup" is about the cup the robot looked at, not about a fork), and no
        model is asked.
        """
        seen = Situation.of(situation)
        text = seen.text
        words = words_of(text)
        mention = find_mention(words, task)
        ruled: SituationFact | None = None
        if mention is not None:
            start, length, name = mention
            subject = resolve_object(name, task, focus)
            if subject is not None:
                rest = words[:start] + words[start + length :]
                predicate = slug(rest) or "is_affected"
                predicate = self._not_clashing(predicate, task, self.reserved)
                ruled = SituationFact(text, Atom(predicate, (subject,)), subject, "rules")
        given = resolve_object(seen.object, task, focus) if seen.object else None
        if given is not None and (ruled is None or ruled.subject != given):
            return self._about_given(text, words, given, task, seen.source)
        if ruled is not None:
            return ruled
        note = ""
        if self.model is not None:
            try:
                atom = self._ask_model(text, task)
                return SituationFact(text, atom, atom.args[0], "model")
            except UnsafeIdentifierError as err:
                note = err.message
        predicate = self._not_clashing(
            slug(words) or "unexpected_situation", task, self.reserved, arity=0
        )
        return SituationFact(text, Atom(predicate), None, "world", note)

    def _about_given(
        self, text: str, words: list[str], subject: str, task: PlanningTask, source: str
    ) -> SituationFact:
        """The fact about the object the source named; its name or kind, where the
        sentence says it, is left out of the predicate ("the cup is missing" ->
        (is_missing cup_1))."""
        names = {subject, task.objects.get(subject, subject)}
        kept = list(words)
        for name in sorted(names, key=lambda n: -len(n.split("_"))):
            parts = name.split("_")
            for start in range(len(kept) - len(parts) + 1):
                if kept[start : start + len(parts)] == parts:
                    kept = kept[:start] + kept[start + len(parts) :]
                    break
        predicate = self._not_clashing(slug(kept) or "is_affected", task, self.reserved)
        note = f"the {source or 'source'} named {subject}"
        return SituationFact(text, Atom(predicate, (subject,)), subject, "source", note)

    def _ask_model(self, situation: str, task: PlanningTask) -> Atom:
        assert self.model is not None
        objects = ", ".join(sorted(task.objects))
        prompt = f"Objects: {objects}. Situation: {situation.strip()}"
        answer = self.model.complete(
            prompt, system=PREDICATE_SYSTEM, examples=PREDICATE_EXAMPLES, max_tokens=16
        )
        return parse_model_predicate(answer, task, self.reserved)

    @staticmethod
    def _not_clashing(
        predicate: str, task: PlanningTask, reserved: frozenset[str], arity: int = 1
    ) -> str:
        """A name that is neither a reserved state predicate nor one of another arity."""
        existing = task.predicates.get(predicate)
        if predicate not in reserved and (existing is None or len(existing) == arity):
            return predicate
        return f"situation_{predicate}"[:PREDICATE_NAME_LIMIT]
