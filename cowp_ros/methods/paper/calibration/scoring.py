"""Monitor decisions as scores: how strongly the model says a step is blocked.

Every variant asks yes/no questions and reads P(yes) from first-token log-probabilities
(`LanguageModel.ask_yes_no`). The score is in log-odds of "blocked", so thresholds of
different variants live on comparable scales and a contrast is a plain difference:

* `plain`       Prompt 1 ("Is it suitable ..., if <situation>?"), score = -logit P(yes).
* `prevents`    the inverted question ("Would it stop a robot from ..., if ...?"),
                score = logit P(yes): a model that leans to "yes" now leans to "blocked".
* `crosstask`   Prompt 1 with few-shot examples from *other* tasks' dev situations,
                blocking and benign in equal number, so the model sees what does and does
                not block a step without seeing the task it is asked about.
* `...-contrast` the same, minus the score of the same step "if everything is as usual":
                a step the model dislikes whatever happens (a low P(yes) for "clean the
                area" even in the normal state) no longer looks blocked by every sentence.
* `both`        the mean of `plain` and `prevents` (and `both-contrast` of their
                contrasts): the two question forms err on different sentences, and
                averaging log-odds costs no question the two do not already ask.

Higher scores mean "blocked"; a calibrated monitor blocks when score >= threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Example, LanguageModel, YesNo
from cowp_ros.methods.paper.prompts import (
    MONITOR_EXAMPLES,
    MONITOR_SYSTEM,
    NORMAL_STATE,
    PREVENTS_EXAMPLES,
    monitor_question,
    prevents_question,
)

P_FLOOR = 1e-4
"""P(yes) is clipped to [P_FLOOR, 1 - P_FLOOR] before the logit: a model that is "sure"
should give a large, finite score, not an infinite one that breaks threshold midpoints."""
CROSS_TASK_SHOTS = 3
"""Blocking and benign examples each (6 in all): enough to show both answers, few enough
to keep the prompt short on a 2-core CPU."""


@dataclass(frozen=True)
class TaskExample:
    """A few-shot example and the task it came from (excluded when asking that task)."""

    task: str
    question: str
    answer: str
    blocking: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "task": self.task,
            "question": self.question,
            "answer": self.answer,
            "blocking": self.blocking,
        }


def logit(p: float) -> float:
    p = min(max(p, P_FLOOR), 1.0 - P_FLOOR)
    return math.log(p / (1.0 - p))


@dataclass(frozen=True)
class Scored:
    """A variant's score for one step and situation, and the answers it came from."""

    score: float | None
    """None when the server gave no P(yes) (the caller falls back on the answer text)."""
    question: str
    answer: YesNo
    reference: YesNo | None = None

    @property
    def blocked_by_text(self) -> bool | None:
        """The answer's own verdict on "blocked", for the fallback without P(yes)."""
        return None if self.answer.answer is None else not self.answer.answer


AskFn = Callable[[str, Sequence[Example]], YesNo]


@dataclass(frozen=True)
class Variant:
    """One way of asking: question form, examples, direction and contrast."""

    name: str
    description: str
    inverted: bool = False
    """True when "yes" means blocked (the `prevents` form)."""
    contrast: bool = False
    cross_task: bool = False
    parts: tuple[str, ...] = ()
    """Names of variants whose scores are averaged (this variant asks nothing itself)."""

    def question(self, step_text: str, situation: str) -> str:
        form = prevents_question if self.inverted else monitor_question
        return form(step_text, situation)

    def examples(self, task: str, pool: Sequence[TaskExample]) -> tuple[Example, ...]:
        if not self.cross_task:
            return PREVENTS_EXAMPLES if self.inverted else MONITOR_EXAMPLES
        return cross_task_examples(task, pool)

    def _blocked_logodds(self, answer: YesNo) -> float | None:
        if answer.p_yes is None:
            return None
        value = logit(answer.p_yes)
        return value if self.inverted else -value

    def score(
        self,
        ask: AskFn,
        step_text: str,
        situation: str,
        task: str,
        pool: Sequence[TaskExample] = (),
    ) -> Scored:
        """Ask (through `ask`, which may memoise) and score one step and situation."""
        if self.parts:
            return _mean_of(
                [VARIANTS[p] for p in self.parts], ask, step_text, situation, task, pool
            )
        examples = self.examples(task, pool)
        question = self.question(step_text, situation)
        answer = ask(question, examples)
        value = self._blocked_logodds(answer)
        reference: YesNo | None = None
        if self.contrast:
            reference = ask(self.question(step_text, NORMAL_STATE), examples)
            base = self._blocked_logodds(reference)
            value = None if value is None or base is None else value - base
        return Scored(value, question, answer, reference)


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("plain", "Prompt 1, -logit P(yes)"),
        Variant(
            "plain-contrast", "Prompt 1 minus the same step in the normal state", contrast=True
        ),
        Variant("prevents", "'would it stop the robot', logit P(yes)", inverted=True),
        Variant(
            "prevents-contrast",
            "'would it stop the robot' minus the normal state",
            inverted=True,
            contrast=True,
        ),
        Variant("crosstask", "Prompt 1, examples from other tasks", cross_task=True),
        Variant(
            "crosstask-contrast",
            "Prompt 1, examples from other tasks, minus the normal state",
            cross_task=True,
            contrast=True,
        ),
        Variant("both", "mean of plain and prevents", parts=("plain", "prevents")),
        Variant(
            "both-contrast",
            "mean of plain-contrast and prevents-contrast",
            parts=("plain-contrast", "prevents-contrast"),
        ),
    )
}


def _mean_of(
    parts: Sequence[Variant],
    ask: AskFn,
    step_text: str,
    situation: str,
    task: str,
    pool: Sequence[TaskExample],
) -> Scored:
    """The parts' mean score; the first part's question and answer stand for the verdict."""
    scored = [part.score(ask, step_text, situation, task, pool) for part in parts]
    values = [s.score for s in scored]
    mean = (
        None
        if any(v is None for v in values)
        else sum(v for v in values if v is not None) / len(values)
    )
    first = scored[0]
    return Scored(mean, first.question, first.answer, first.reference)


def get_variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise CowpError(f"unknown monitor variant {name!r}; known: {', '.join(VARIANTS)}") from None


def cross_task_examples(task: str, pool: Sequence[TaskExample]) -> tuple[Example, ...]:
    """Up to CROSS_TASK_SHOTS blocking and benign examples not from `task`, alternating.

    The pool's order decides (it is built in a fixed order), so a task always gets the
    same examples and the server's prompt cache keeps them between its questions.
    """
    others = [example for example in pool if example.task != task]
    blocking = [e for e in others if e.blocking][:CROSS_TASK_SHOTS]
    benign = [e for e in others if not e.blocking][:CROSS_TASK_SHOTS]
    if not blocking or not benign:
        raise CowpError(
            f"the cross-task example pool has no blocking or no benign example outside {task}",
            hint="tune with the dataset loaded (--dataset-dir), or pick another variant",
        )
    mixed: list[Example] = []
    for index in range(max(len(blocking), len(benign))):
        for part in (blocking, benign):
            if index < len(part):
                mixed.append(Example(part[index].question, part[index].answer))
    return tuple(mixed)


def ask_with(model: LanguageModel) -> AskFn:
    """`ask` for `Variant.score`: the monitor's system prompt, no memo (the client caches)."""

    def ask(question: str, examples: Sequence[Example]) -> YesNo:
        return model.ask_yes_no(question, system=MONITOR_SYSTEM, examples=examples)

    return ask
