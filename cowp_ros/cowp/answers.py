"""What the loop's ports answer: the value types every method speaks in.

The `Monitor` gives a `PlanCheck` (its decision, with the `MonitorVerdict`s of the
questions asked), the `FactMaker` a `SituationFact`, the `Acquirer` a
`CandidateAssessment` per kind (its `RoleQuestion`s) and a `Selection`. They live on
the ground floor of the loop's package, below every method, so that `ports.py` and the
loop depend on no method's module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cowp_ros.llm.language_model import Choice, YesNo
from cowp_ros.pddl import Atom
from cowp_ros.planning.result import PlanStep


@dataclass(frozen=True)
class SituationFact:
    """A situation as a fact over the domain: what the precondition and state will say.

    `subject` is the object the situation is about (None for a fact about the world);
    `source` says how it was made: `rules`, `model` or `world` (the nullary fallback);
    `note` keeps why a model answer was refused, for the report.
    """

    situation: str
    atom: Atom
    subject: str | None
    source: str
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "situation": self.situation,
            "fact": str(self.atom),
            "subject": self.subject,
            "source": self.source,
            "note": self.note,
        }


@dataclass(frozen=True)
class MonitorVerdict:
    """One Prompt 1 question about one step and its outcome."""

    step: PlanStep
    situation: str
    question: str
    answer: YesNo
    suitable: bool
    unclear: bool
    repeated: bool = False
    score: float | None = None
    """Calibrated monitors: the variant's score (log-odds of "blocked"); else None."""
    threshold: float | None = None
    variant: str | None = None
    seconds: float | None = None
    """How long the question took to answer (a cached answer: about 0), when measured."""
    judgement: str = ""
    """What the answer was judged to mean, in words ("the cup is not dirty"), from the
    monitor that asked it: only it knows which answer of its question blocks ("" where
    it does not say: the narration then speaks of the step)."""
    confidence: float | None = None
    """The model's probability of the answer judged, with `judgement`."""

    def to_dict(self) -> dict[str, Any]:
        calibrated = (
            {"score": self.score, "threshold": self.threshold, "variant": self.variant}
            if self.variant is not None
            else {}
        )
        if self.seconds is not None:
            calibrated["seconds"] = round(self.seconds, 4)
        if self.judgement:
            calibrated["judgement"] = self.judgement
        return {
            "prompt": 1,
            "step": str(self.step),
            "situation": self.situation,
            "question": self.question,
            "answer": self.answer.text,
            "p_yes": self.answer.p_yes,
            "cached": self.answer.cached,
            "suitable": self.suitable,
            "unclear": self.unclear,
            "repeated": self.repeated,
            **calibrated,
        }


@dataclass(frozen=True)
class PlanCheck:
    """The Plan Monitor's decision about one situation and a run of plan steps.

    `blocked`: the first step the situation makes unsuitable (None: the plan still
    holds); `fact`: what the situation means, as a fact over the domain's objects, when
    the monitor makes it itself (else the loop's fact maker does); `reason`: why, in
    words a person reads. `verdicts`: the questions asked for the decision, each about
    the step it names, in order: one per checked step for the paper's monitor, at most
    one per situation for a monitor that decides once (steps before `blocked` that no
    question was about were judged not affected).
    """

    verdicts: tuple[MonitorVerdict, ...] = ()
    blocked: PlanStep | None = None
    fact: SituationFact | None = None
    reason: str = ""


ROLE_ACTION = ""
"""`RoleQuestion.action` of the role question, which is about the task, not an action."""


@dataclass(frozen=True)
class RoleQuestion:
    """One Prompt 2 question: can `candidate_type` do `action` in the role? (`action` is
    `ROLE_ACTION` for the role question: can it stand in for the role in the task?)"""

    action: str
    question: str
    answer: YesNo
    suitable: bool
    unclear: bool
    threshold: float | None = None
    """The P(yes) the answer needed, where P(yes) decided it (None: its word did): a
    "Yes" under it is not enough, and the narrative says so with both figures."""

    @property
    def cut_off(self) -> str:
        """ "P 0.898, needs 0.90" where the threshold, not the answer's word, decided (a
        "Yes" that was not enough, an unclear answer), else ""."""
        if self.threshold is None or self.answer.p_yes is None:
            return ""
        if self.answer.answer is not None and self.answer.answer == self.suitable:
            return ""
        return f"P {self.answer.p_yes:.3f}, needs {self.threshold:.2f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt": 2,
            "action": self.action,
            "question": self.question,
            "answer": self.answer.text,
            "p_yes": self.answer.p_yes,
            "cached": self.answer.cached,
            "suitable": self.suitable,
            "unclear": self.unclear,
            "threshold": self.threshold,
        }


@dataclass
class CandidateAssessment:
    """All Prompt 2 questions about one kind of object, and whether it was accepted."""

    candidate_type: str
    example_object: str
    questions: list[RoleQuestion] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return bool(self.questions) and all(q.suitable for q in self.questions)

    @property
    def confidence(self) -> float:
        """Product of P(yes) where known (1.0 per plain yes): the fallback ranking."""
        score = 1.0
        for q in self.questions:
            score *= q.answer.p_yes if q.answer.p_yes is not None else 1.0
        return score

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate_type,
            "example_object": self.example_object,
            "accepted": self.accepted,
            "questions": [q.to_dict() for q in self.questions],
        }


@dataclass(frozen=True)
class Selection:
    """The Prompt 3 outcome: the chosen kind, and how it was chosen."""

    chosen: str
    question: str | None
    answer: Choice | None
    how: str  # "only candidate", "model", "fallback: ..."

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt": 3,
            "chosen": self.chosen,
            "question": self.question,
            "answer": self.answer.text if self.answer else None,
            "cached": self.answer.cached if self.answer else None,
            "how": self.how,
        }
