"""The Plan Monitor: is this plan step still suitable, given this situation? (Prompt 1)

An answer that is neither yes nor no falls back, documented: the first-token P(yes)
decides when the server gave one, else the step is kept as suitable. Blocking a step
without evidence would send the robot replanning on noise; the verdict is marked
`unclear` in the report either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.result import PlanStep
from cowp_ros.reasoning.action_text import ActionPhrases
from cowp_ros.reasoning.language_model import Example, LanguageModel, YesNo
from cowp_ros.reasoning.prompts import MONITOR_EXAMPLES, MONITOR_SYSTEM, monitor_question


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

    def to_dict(self) -> dict[str, Any]:
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
        }


def judged_yes(answer: YesNo, threshold: float, default: bool) -> tuple[bool, bool]:
    """(verdict, unclear) for a yes/no answer, with the documented fallback."""
    if answer.answer is not None:
        return answer.answer, False
    if answer.p_yes is not None:
        return answer.p_yes >= threshold, True
    return default, True


class PlanMonitor:
    """Asks Prompt 1 for plan steps; remembers answers so a question is asked once."""

    def __init__(
        self,
        model: LanguageModel,
        phrases: ActionPhrases,
        *,
        examples: tuple[Example, ...] = MONITOR_EXAMPLES,
        threshold: float = 0.5,
    ) -> None:
        self.model = model
        self.phrases = phrases
        self.examples = examples
        self.threshold = threshold
        self._asked: dict[str, YesNo] = {}

    def check(self, step: PlanStep, situation: str, task: PlanningTask) -> MonitorVerdict:
        """Is `step` suitable if `situation` holds?"""
        question = monitor_question(self.phrases.describe(step, task), situation)
        repeated = question in self._asked
        if repeated:
            answer = self._asked[question]
        else:
            answer = self.model.ask_yes_no(question, system=MONITOR_SYSTEM, examples=self.examples)
            self._asked[question] = answer
        suitable, unclear = judged_yes(answer, self.threshold, default=True)
        return MonitorVerdict(step, situation, question, answer, suitable, unclear, repeated)
