"""The Plan Monitor: is this plan step still suitable, given this situation? (Prompt 1)

An answer that is neither yes nor no falls back, documented: the first-token P(yes)
decides when the server gave one, else the step is kept as suitable. Blocking a step
without evidence would send the robot replanning on noise; the verdict is marked
`unclear` in the report either way.

Calibrated decisions: with an entry for its model in
`config/monitor_calibration.yaml` (see `cowp_ros.methods.paper.calibration`), the monitor
no longer takes the model's yes/no at face value. It scores the step with the entry's
variant (P(yes) from first-token log-probabilities, possibly contrasted with the same
step in the normal state, possibly the inverted question or cross-task examples) and
blocks when the score reaches the threshold tuned on the dev split. The small local
model says "no" to many harmless sentences; a threshold chosen on blocking *and* benign
situations is what keeps it from replanning on a chair moved in another room.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from cowp_ros.cowp.answers import MonitorVerdict, PlanCheck
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.language_model import Example, LanguageModel, YesNo
from cowp_ros.methods.paper.calibration.config import MonitorCalibration, calibration_for
from cowp_ros.methods.paper.prompts import MONITOR_EXAMPLES, MONITOR_SYSTEM, monitor_question
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks.phrases import ActionPhrases


def judged_yes(answer: YesNo, threshold: float, default: bool) -> tuple[bool, bool]:
    """(verdict, unclear) for a yes/no answer, with the documented fallback."""
    if answer.answer is not None:
        return answer.answer, False
    if answer.p_yes is not None:
        return answer.p_yes >= threshold, True
    return default, True


AUTO: Literal["auto"] = "auto"


class PlanMonitor:
    """Asks Prompt 1 for plan steps; remembers answers so a question is asked once.

    `calibration`: "auto" (default) reads the entry for `model.name` from the default
    calibration file (none there: the plain yes/no decision); None forces the plain
    decision; a `MonitorCalibration` is used as given. `threshold` and `examples`
    belong to the plain decision (the P(yes) fallback for answers that are neither yes
    nor no, the few-shot examples); a calibrated variant asks with the examples its
    threshold was tuned with, since another prompt would need another threshold.
    """

    def __init__(
        self,
        model: LanguageModel,
        phrases: ActionPhrases,
        *,
        examples: tuple[Example, ...] = MONITOR_EXAMPLES,
        threshold: float = 0.5,
        calibration: MonitorCalibration | Literal["auto"] | None = AUTO,
    ) -> None:
        self.model = model
        self.phrases = phrases
        self.examples = examples
        self.threshold = threshold
        self.calibration = calibration_for(model.name) if calibration == AUTO else calibration
        self._asked: dict[str, YesNo] = {}
        self._asked_with: dict[tuple[str, tuple[Example, ...]], YesNo] = {}

    def _ask_memoised(self, question: str, examples: Sequence[Example]) -> YesNo:
        key = (question, tuple(examples))
        if key not in self._asked_with:
            self._asked_with[key] = self.model.ask_yes_no(
                question, system=MONITOR_SYSTEM, examples=examples
            )
        return self._asked_with[key]

    def check(
        self,
        steps: Sequence[PlanStep],
        situation: Situation,
        task: PlanningTask,
        focus: Sequence[str] = (),
    ) -> PlanCheck:
        """The `Monitor` port: each step in turn until the first unsuitable one.

        The fact is left to the loop's fact maker (`focus` is for monitors that make it
        themselves): in one process, asking for it costs nothing extra later.
        """
        verdicts = []
        for step in steps:
            verdict = self.check_step(step, situation.text, task)
            verdicts.append(verdict)
            if not verdict.suitable:
                reason = f"asked {verdict.question!r}, the model answered {verdict.answer.text!r}"
                return PlanCheck(tuple(verdicts), step, reason=reason)
        return PlanCheck(tuple(verdicts))

    def check_step(self, step: PlanStep, situation: str, task: PlanningTask) -> MonitorVerdict:
        """Is `step` suitable if `situation` holds?"""
        if self.calibration is not None:
            return self._check_calibrated(step, situation, task, self.calibration)
        question = monitor_question(self.phrases.describe(step, task), situation)
        repeated = question in self._asked
        if repeated:
            answer = self._asked[question]
        else:
            answer = self.model.ask_yes_no(question, system=MONITOR_SYSTEM, examples=self.examples)
            self._asked[question] = answer
        suitable, unclear = judged_yes(answer, self.threshold, default=True)
        return MonitorVerdict(step, situation, question, answer, suitable, unclear, repeated)

    def _check_calibrated(
        self,
        step: PlanStep,
        situation: str,
        task: PlanningTask,
        calibration: MonitorCalibration,
    ) -> MonitorVerdict:
        """The calibrated decision: blocked when the variant's score >= the threshold.

        Without P(yes) (a server that returns no log-probabilities) there is no score,
        and the answer's own yes/no decides, marked unclear; with neither, the step is
        kept, as in the plain decision.
        """
        variant = calibration.variant
        step_text = self.phrases.describe(step, task)
        question = variant.question(step_text, situation)
        repeated = any(key[0] == question for key in self._asked_with)
        scored = variant.score(
            self._ask_memoised, step_text, situation, task.domain.name, calibration.examples
        )
        if scored.score is not None:
            suitable, unclear = scored.score < calibration.threshold, False
        else:
            blocked = scored.blocked_by_text
            suitable, unclear = (True if blocked is None else not blocked), True
        return MonitorVerdict(
            step,
            situation,
            scored.question,
            scored.answer,
            suitable,
            unclear,
            repeated,
            score=scored.score,
            threshold=calibration.threshold,
            variant=variant.name,
        )
