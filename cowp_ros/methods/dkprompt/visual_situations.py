"""Situations YOLO cannot see, asked of a vision-language model on the wrist image.

(DKPROMPT's questions as a situation source on the graph: the vlm_checker node.)

A COCO detector sees that a cup is there and what stands in it; it cannot see that the
cup is dirty, cracked or chipped. A vision-language model can be asked, as DKPROMPT asks
its questions: yes/no questions about the image the wrist camera took at a step. Two
kinds of question are asked at each step, in one request:

- **defects** of each object the step acts on (config/vlm_checker.yaml: "Is the cup
  dirty?"), answered yes: the situation the file gives ("the cup is dirty");
- **the step's preconditions**, where the task's domain is known and DKPROMPT's
  templates have a question for them (config/dkprompt_templates.yaml: "Is water running
  from the faucet?"), answered against what the step needs: the question and the answer
  seen, as the situation ("Is water running from the faucet? The wrist camera shows
  no.").

An answer that is neither yes nor no (DKPROMPT's skip, a line missing) says nothing: an
unreadable answer must not change the plan. Pure functions over the questions and the
answers, so the rules are tested without a server or a camera.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.methods.dkprompt.questions import Answer, QuestionTemplates, questions_for
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep
from cowp_ros.skills.config import read_yaml
from cowp_ros.tasks.phrases import noun

FIELDS = ("question", "situation")


@dataclass(frozen=True)
class Defect:
    """One defect to ask about: `question` and `situation` name the object as {object}
    ("the cup")."""

    name: str
    question: str
    situation: str


@dataclass(frozen=True)
class VisualCheck:
    """A question about the step's image, and what it means when the answer is
    `reported_on`: the situation about `object`."""

    question: str
    object: str
    reported_on: Answer
    situation: str


def load_defects(path: Path | str) -> tuple[Defect, ...]:
    """The defects of a checks file; CowpError naming the file and the entry."""
    data = read_yaml(Path(path))
    entries = data.get("defects") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise CowpError(f"{path}: 'defects' must map each defect to its question and situation")
    defects = []
    for name, entry in entries.items():
        where = f"{path}: defects.{name}"
        if not isinstance(entry, dict) or sorted(entry) != sorted(FIELDS):
            raise CowpError(f"{where} needs exactly: {', '.join(FIELDS)}")
        for field in FIELDS:
            text = entry[field]
            if not isinstance(text, str) or "{object}" not in text:
                raise CowpError(f"{where}.{field} must be text naming {{object}}")
        defects.append(Defect(str(name), entry["question"], entry["situation"]))
    return tuple(defects)


def checks_for_step(
    step: PlanStep,
    defects: Sequence[Defect],
    task: PlanningTask | None = None,
    templates: QuestionTemplates | None = None,
) -> list[VisualCheck]:
    """The questions for one step: each defect of each object it acts on (its kind from
    the task where it is known, else from the name: cup_1 -> the cup), then its
    preconditions that the templates ask about."""
    checks: list[VisualCheck] = []
    for name in dict.fromkeys(step.args):
        kind = task.objects.get(name) if task is not None else None
        the_object = noun(kind or _kind_of(name))
        for defect in defects:
            checks.append(
                VisualCheck(
                    _sentence(defect.question.format(object=the_object)),
                    name,
                    Answer.YES,
                    defect.situation.format(object=the_object),
                )
            )
    if task is not None and templates is not None:
        try:
            asked = questions_for(task, step, "pre", templates).questions
        except (CowpError, KeyError):
            asked = ()  # an action the domain does not have (a variant): no preconditions
        for question in asked:
            unexpected = Answer.NO if question.expected is Answer.YES else Answer.YES
            about = next((a for a in question.literal.atom.args if a in step.args), "")
            checks.append(
                VisualCheck(
                    question.question,
                    about,
                    unexpected,
                    f"{question.question} The wrist camera shows {unexpected.value}.",
                )
            )
    return checks


def situations_from(
    checks: Sequence[VisualCheck], answers: Sequence[Answer]
) -> list[tuple[str, str]]:
    """(object, situation) for each check answered as it reports; a skip says nothing."""
    if len(answers) != len(checks):
        raise CowpError(f"{len(answers)} answers to {len(checks)} questions")
    return [
        (check.object, check.situation)
        for check, answer in zip(checks, answers, strict=True)
        if answer is not Answer.SKIP and answer is check.reported_on
    ]


def _kind_of(name: str) -> str:
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:]


def as_dict(check: VisualCheck) -> dict[str, Any]:
    return {
        "question": check.question,
        "object": check.object,
        "reported_on": check.reported_on.value,
        "situation": check.situation,
    }
