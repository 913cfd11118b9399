"""DKPROMPT: a plan step's PDDL preconditions and effects as yes/no questions on an image.

Before a step, each precondition literal becomes a question about the wrist-camera
image ("Is the robot holding the cup in its gripper?"); after it, each effect literal
does. The wording comes from a template per predicate (`config/dkprompt_templates.yaml`),
so adding a domain is adding lines, and a predicate a camera cannot show (which room
the robot is in) is marked there and never asked. A negated literal is asked as its
positive question with "no" expected, or with the template's `negated` wording.

Answers are yes, no or skip. Yes and no say what is true now, whatever the plan
expected, and the problem's state follows them (`edits.add_fact` / `remove_fact`); a
skip changes nothing. An answer that contradicts what the step needs (a precondition
seen false) or what it should have done (an effect not seen) is a mismatch, and the
caller replans from the updated state (`cowp_ros.methods.dkprompt.loop`).
"""

from __future__ import annotations

import enum
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal as TypingLiteral
from typing import Protocol

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.pddl import Atom, Literal, PlanningTask, edits
from cowp_ros.pddl.formulas import top_literals
from cowp_ros.pddl.model import atom_of
from cowp_ros.planning.result import PlanStep
from cowp_ros.resources import share_path
from cowp_ros.tasks.phrases import noun

Moment = TypingLiteral["pre", "post"]
TEMPLATES_FILE = ("config", "dkprompt_templates.yaml")
_NUMBER_SUFFIX = re.compile(r"_(\d+)$")


class Answer(enum.Enum):
    """What the vision-language model said about one question."""

    YES = "yes"
    NO = "no"
    SKIP = "skip"  # the image does not show it, or the answer was neither


class VisualQuestioner(Protocol):
    """Asks several yes/no questions about one image in one call."""

    @property
    def name(self) -> str: ...

    def ask(self, questions: Sequence[str], image: object | None) -> list[Answer]:
        """One answer per question, in order (SKIP where it said neither)."""
        ...


# ---- templates ----------------------------------------------------------------------


@dataclass(frozen=True)
class PredicateTemplate:
    """How to ask about one predicate, or why not to."""

    predicate: str
    question: str | None
    negated: str | None = None
    checkable: bool = True
    why: str = ""


@dataclass(frozen=True)
class QuestionTemplates:
    """The per-predicate templates of one data file."""

    templates: Mapping[str, PredicateTemplate]
    source: str = "<memory>"

    @classmethod
    def load(cls, path: Path | str | None = None) -> QuestionTemplates:
        """Read the templates file (default: the package's config/dkprompt_templates.yaml)."""
        path = Path(path) if path is not None else share_path(*TEMPLATES_FILE)
        return _load_templates(path.resolve())

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object], source: str) -> QuestionTemplates:
        entries = raw.get("predicates") if isinstance(raw, Mapping) else None
        if not isinstance(entries, Mapping):
            raise CowpError(f"{source}: expected a 'predicates:' mapping")
        templates: dict[str, PredicateTemplate] = {}
        for name, entry in entries.items():
            if not isinstance(entry, Mapping):
                raise CowpError(f"{source}: predicate {name!r} needs a mapping")
            checkable = bool(entry.get("checkable", True))
            question = entry.get("question")
            if checkable and not isinstance(question, str):
                raise CowpError(
                    f"{source}: predicate {name!r} has no question", hint="or set checkable: false"
                )
            for text in (question, entry.get("negated")):
                if isinstance(text, str):
                    _check_fields(text, f"{source}: {name}")
            templates[str(name)] = PredicateTemplate(
                str(name),
                question if isinstance(question, str) else None,
                entry.get("negated") if isinstance(entry.get("negated"), str) else None,
                checkable,
                str(entry.get("why", "")),
            )
        return cls(templates, source)


@cache
def _load_templates(path: Path) -> QuestionTemplates:
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise CowpError(f"DKPROMPT templates not found: {path}") from None
    except yaml.YAMLError as err:
        raise CowpError(f"cannot read DKPROMPT templates {path}: {err}") from err
    return QuestionTemplates.from_mapping(raw, str(path))


def _check_fields(template: str, where: str) -> None:
    for _, field_name, _, _ in string.Formatter().parse(template):
        if field_name is not None and not field_name.isdigit():
            raise CowpError(f"{where}: template uses {{{field_name}}}; use {{0}}, {{1}}, ...")


# ---- questions ----------------------------------------------------------------------


@dataclass(frozen=True)
class VisualQuestion:
    """A ground literal as a question; `expected` is the answer under which it holds."""

    literal: Literal
    question: str
    expected: Answer

    def atom_true(self, answer: Answer) -> bool | None:
        """What the answer says about the atom (None for a skip)."""
        if answer is Answer.SKIP:
            return None
        holds = answer is self.expected
        return holds if self.literal.positive else not holds


@dataclass(frozen=True)
class SkippedLiteral:
    """A literal not asked, and why (not visually checkable, no template)."""

    literal: Literal
    reason: str


def render_object(name: str, task: PlanningTask) -> str:
    """`cup_1` -> "the cup"; "the bolt 2" when several objects share the type."""
    type_name = task.objects.get(name, _NUMBER_SUFFIX.sub("", name))
    siblings = [o for o, t in task.objects.items() if t == type_name]
    if len(siblings) <= 1:
        return noun(type_name)
    found = _NUMBER_SUFFIX.search(name)
    return f"{noun(type_name)} {found.group(1) if found else name.replace('_', ' ')}"


def step_literals(task: PlanningTask, step: PlanStep, moment: Moment) -> list[Literal]:
    """The ground precondition (`pre`) or effect (`post`) literals of a step.

    An atom both added and deleted by the action ends up true (adds after deletes), so
    only the positive literal is kept.
    """
    action = task.action(step.action)
    params = [str(v) for v in action.parameters]
    if len(params) != len(step.args):
        raise CowpError(f"{step}: {step.action} takes {len(params)} argument(s)")
    binding = dict(zip(params, step.args, strict=True))
    formula = action.precondition if moment == "pre" else action.effect
    ground: list[Literal] = []
    for lit in top_literals(formula):
        atom = atom_of(lit.predicate)
        ground.append(
            Literal(Atom(atom.predicate, tuple(binding.get(a, a) for a in atom.args)), lit.positive)
        )
    added = {lit.atom for lit in ground if lit.positive}
    kept = [lit for lit in ground if lit.positive or lit.atom not in added]
    return list(dict.fromkeys(kept))


def question_for(
    literal: Literal, task: PlanningTask, templates: QuestionTemplates
) -> VisualQuestion | SkippedLiteral:
    """The question for one ground literal, or why it is not asked."""
    template = templates.templates.get(literal.atom.predicate)
    if template is None:
        return SkippedLiteral(literal, f"no template for {literal.atom.predicate}")
    if not template.checkable or template.question is None:
        return SkippedLiteral(literal, f"not visually checkable: {template.why or 'marked so'}")
    nouns = [render_object(a, task) for a in literal.atom.args]
    try:
        if not literal.positive and template.negated:
            return VisualQuestion(literal, _sentence(template.negated.format(*nouns)), Answer.YES)
        text = _sentence(template.question.format(*nouns))
    except IndexError:
        return SkippedLiteral(literal, f"the template names more arguments than {literal.atom} has")
    return VisualQuestion(literal, text, Answer.YES if literal.positive else Answer.NO)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class QuestionSet:
    """The questions for one step and moment, and the literals left unasked."""

    step: PlanStep
    moment: Moment
    questions: tuple[VisualQuestion, ...]
    skipped: tuple[SkippedLiteral, ...]


def questions_for(
    task: PlanningTask, step: PlanStep, moment: Moment, templates: QuestionTemplates
) -> QuestionSet:
    """Every literal of the step's precondition or effect, as a question or a skip."""
    asked: list[VisualQuestion] = []
    skipped: list[SkippedLiteral] = []
    for literal in step_literals(task, step, moment):
        made = question_for(literal, task, templates)
        (asked if isinstance(made, VisualQuestion) else skipped).append(made)  # type: ignore[arg-type]
    return QuestionSet(step, moment, tuple(asked), tuple(skipped))


# ---- answers and the state ------------------------------------------------------------


@dataclass(frozen=True)
class CheckedLiteral:
    """One question, its answer, and what that means for the state."""

    question: VisualQuestion
    answer: Answer

    @property
    def atom_true(self) -> bool | None:
        return self.question.atom_true(self.answer)

    @property
    def mismatch(self) -> bool:
        """The answer contradicts the literal the step needs (or should have made) true."""
        return self.answer is not Answer.SKIP and self.answer is not self.question.expected

    def to_dict(self) -> dict[str, object]:
        return {
            "literal": str(self.question.literal),
            "question": self.question.question,
            "answer": self.answer.value,
            "expected": self.question.expected.value,
            "mismatch": self.mismatch,
        }


@dataclass(frozen=True)
class StateChange:
    """A fact added or removed because of an answer."""

    change: str  # "add_fact" or "remove_fact"
    atom: Atom
    question: str

    def __str__(self) -> str:
        verb = "added fact" if self.change == "add_fact" else "removed fact"
        return f"{verb} {self.atom} (seen: {self.question})"


def apply_answers(
    task: PlanningTask, checks: Sequence[CheckedLiteral]
) -> tuple[PlanningTask, list[StateChange]]:
    """The state after believing every yes/no answer (skips leave facts as they are)."""
    changes: list[StateChange] = []
    for check in checks:
        truth = check.atom_true
        atom = check.question.literal.atom
        if truth is True and atom not in task.init_atoms:
            task = edits.add_fact(task, atom)
            changes.append(StateChange("add_fact", atom, check.question.question))
        elif truth is False and atom in task.init_atoms:
            task = edits.remove_fact(task, atom)
            changes.append(StateChange("remove_fact", atom, check.question.question))
    return task, changes


@dataclass(frozen=True)
class CheckOutcome:
    """The result of checking one step at one moment."""

    questions: QuestionSet
    checks: tuple[CheckedLiteral, ...]
    task: PlanningTask
    changes: tuple[StateChange, ...] = field(default_factory=tuple)
    image_missing: bool = False

    @property
    def mismatches(self) -> list[CheckedLiteral]:
        return [c for c in self.checks if c.mismatch]


class DKPromptChecker:
    """Asks a step's questions on an image and updates the task's state from the answers."""

    def __init__(
        self, questioner: VisualQuestioner, templates: QuestionTemplates | None = None
    ) -> None:
        self.questioner = questioner
        self.templates = templates or QuestionTemplates.load()

    def check(
        self, task: PlanningTask, step: PlanStep, moment: Moment, image: object | None
    ) -> CheckOutcome:
        """Ask every checkable literal of `step` at `moment` in one call (none without an
        image or without questions: nothing is then known, so nothing changes)."""
        asked = questions_for(task, step, moment, self.templates)
        if not asked.questions or image is None:
            return CheckOutcome(
                asked, (), task, (), image_missing=image is None and bool(asked.questions)
            )
        answers = self.questioner.ask([q.question for q in asked.questions], image)
        if len(answers) != len(asked.questions):
            raise CowpError(
                f"{self.questioner.name} gave {len(answers)} answers to "
                f"{len(asked.questions)} questions"
            )
        checks = tuple(CheckedLiteral(q, a) for q, a in zip(asked.questions, answers, strict=True))
        updated, changes = apply_answers(task, checks)
        return CheckOutcome(asked, checks, updated, tuple(changes))


__all__ = [
    "Answer",
    "CheckOutcome",
    "CheckedLiteral",
    "DKPromptChecker",
    "PredicateTemplate",
    "QuestionSet",
    "QuestionTemplates",
    "SkippedLiteral",
    "StateChange",
    "VisualQuestion",
    "VisualQuestioner",
    "apply_answers",
    "question_for",
    "questions_for",
    "render_object",
    "step_literals",
]
