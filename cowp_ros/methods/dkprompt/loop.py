"""Run a task with DKPROMPT checks: ask before each step, ask after it, replan on a mismatch.

    plan -> for each step: [pre] ask its preconditions on the image before it; believe
    the answers; a precondition seen false -> replan from the updated state
         -> execute (the executor says whether it worked; the state takes the effects)
         -> [post] ask its effects on the image after it; believe the answers; an
            effect not seen -> replan from the updated state

`mode` picks the paper's ablations: `pre` (preconditions only), `post` (effects only),
`both`. Images come from an `ImageSource`, one per check; a missing image leaves the
state as the plan expects (nothing was seen, so nothing is known). Every plan, question,
answer and state change lands in a `CowpReport`, so `cowp run` prints the same kind of
narrative as for COWP and `--report` writes the same JSON.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cowp_ros.cowp.report import CowpReport
from cowp_ros.errors import CowpError
from cowp_ros.methods.dkprompt.questions import CheckOutcome, DKPromptChecker, Moment
from cowp_ros.methods.dkprompt.vision import MIME_BY_SUFFIX, EncodedImage
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.tasks.phrases import ActionPhrases


class DKPromptMode(enum.Enum):
    """Which checks run (the DKPROMPT paper's ablations)."""

    PRE = "pre"
    POST = "post"
    BOTH = "both"

    @property
    def checks_pre(self) -> bool:
        return self in (DKPromptMode.PRE, DKPromptMode.BOTH)

    @property
    def checks_post(self) -> bool:
        return self in (DKPromptMode.POST, DKPromptMode.BOTH)

    @classmethod
    def parse(cls, text: str) -> DKPromptMode:
        try:
            return cls(text.lower())
        except ValueError:
            raise CowpError(
                f"unknown DKPROMPT mode {text!r}", hint="choose pre, post or both"
            ) from None


class ImageSource(Protocol):
    """The camera image for one check: the `attempt`-th step tried, before or after."""

    def image_for(self, attempt: int, step: PlanStep, moment: Moment) -> EncodedImage | None: ...


@dataclass(frozen=True)
class ImageDirectory:
    """Images in a folder, named by the step attempt (1-based) and the moment.

    For attempt 3 before its step, the first file that exists of: `03_pre.<ext>`,
    `03_<action>_pre.<ext>`, `03.<ext>` (one picture for both moments); after it, the
    same with `post`. `<ext>` is png, jpg, jpeg or webp.
    """

    folder: Path

    def __post_init__(self) -> None:
        if not self.folder.is_dir():
            raise CowpError(f"--images {self.folder}: not a folder")

    def image_for(self, attempt: int, step: PlanStep, moment: Moment) -> EncodedImage | None:
        stems = (
            f"{attempt:02d}_{moment}",
            f"{attempt:02d}_{step.action}_{moment}",
            f"{attempt:02d}",
        )
        for stem in stems:
            for suffix in MIME_BY_SUFFIX:
                path = self.folder / f"{stem}{suffix}"
                if path.is_file():
                    return EncodedImage.from_path(path)
        return None


@dataclass
class DKPromptRun:
    """The outcome of one run."""

    outcome: str  # completed | no_solution | gave_up
    task: PlanningTask
    executed: list[PlanStep]
    replans: int
    report: CowpReport


class DKPromptLoop:
    """One task run under DKPROMPT checks (see the module docstring)."""

    def __init__(
        self,
        task: PlanningTask,
        *,
        planner: Planner,
        checker: DKPromptChecker,
        images: ImageSource,
        mode: DKPromptMode = DKPromptMode.BOTH,
        phrases: ActionPhrases | None = None,
        executor: Callable[[PlanStep], bool] | None = None,
        report: CowpReport | None = None,
        planner_timeout_s: float = 60.0,
        max_attempts: int = 100,
    ) -> None:
        self.task = task
        self.planner = planner
        self.checker = checker
        self.images = images
        self.mode = mode
        self.phrases = phrases or ActionPhrases({})
        self.executor = executor or (lambda step: True)
        self.report = report or CowpReport(
            task=task.domain.name,
            description="",
            planner=planner.name,
            model=checker.questioner.name,
        )
        self.planner_timeout_s = planner_timeout_s
        self.max_attempts = max_attempts
        self.executed: list[PlanStep] = []
        self.replans = 0
        self._remaining: list[PlanStep] = []

    def run(self) -> DKPromptRun:
        if not self._plan("initial plan"):
            return self._end("no_solution", "the task has no plan")
        for attempt in range(1, self.max_attempts + 1):
            if self._goal_reached():
                return self._end("completed", f"goal reached after {len(self.executed)} step(s)")
            if not self._remaining and not self._plan("the plan ran out before the goal"):
                return self._end("no_solution", "no plan from the state the camera showed")
            step = self._remaining[0]
            if self.mode.checks_pre:
                checked = self._check(attempt, step, "pre")
                if checked.mismatches:
                    if not self._replan_after(checked, "a precondition is not seen"):
                        return self._end("no_solution", "no plan from the state the camera showed")
                    continue
            before = self.task
            ok = self.executor(step)
            self._remaining.pop(0)
            if ok:
                self.task = edits.apply_action(self.task, step.action, step.args)
                self.executed.append(step)
            self.report.add(
                "step", f"{'did' if ok else 'failed'}: {self._say(step)}", step=str(step), ok=ok
            )
            if self.mode.checks_post:
                checked = self._check(attempt, step, "post")
                if checked.mismatches:
                    if not self._replan_after(checked, "an effect is not seen"):
                        return self._end("no_solution", "no plan from the state the camera showed")
                    continue
            if not ok and self.task == before and not self._plan(f"{step} failed"):
                return self._end("no_solution", f"{step} failed and nothing else works")
        return self._end("gave_up", f"still not at the goal after {self.max_attempts} attempts")

    # ---- internals ------------------------------------------------------------------

    def _check(self, attempt: int, step: PlanStep, moment: Moment) -> CheckOutcome:
        image = self.images.image_for(attempt, step, moment)
        outcome = self.checker.check(self.task, step, moment, image)
        when = "before" if moment == "pre" else "after"
        if outcome.image_missing:
            self.report.add(
                "monitor",
                f"no image {when} {self._say(step)} (attempt {attempt}): nothing checked",
                method="dkprompt",
                moment=moment,
            )
        for skipped in outcome.questions.skipped:
            self.report.add(
                "monitor",
                f"not asked {when} {self._say(step)}: {skipped.literal} ({skipped.reason})",
                method="dkprompt",
                moment=moment,
                literal=str(skipped.literal),
                skipped=skipped.reason,
            )
        for check in outcome.checks:
            mark = " (MISMATCH)" if check.mismatch else ""
            self.report.add(
                "monitor",
                f"asked {when} {self._say(step)}: {check.question.question} -> "
                f"{check.answer.value}{mark}",
                method="dkprompt",
                moment=moment,
                **check.to_dict(),
            )
        for change in outcome.changes:
            self.report.add("pddl_change", str(change), change=change.change, fact=str(change.atom))
        self.task = outcome.task
        return outcome

    def _replan_after(self, checked: CheckOutcome, what: str) -> bool:
        seen = "; ".join(str(c.question.literal) for c in checked.mismatches)
        return self._plan(f"{what}: {seen}")

    def _plan(self, reason: str) -> bool:
        result = self.planner.solve(self.task, self.planner_timeout_s)
        self.replans += 1 if self.report.of_kind("plan") else 0
        if result.found:
            self._remaining = list(result.steps)
            steps = ", ".join(str(s) for s in result.steps) or "nothing left to do"
            text = f"planned ({reason}): {steps} [{result.seconds:.2f} s]"
        else:
            self._remaining = []
            text = f"no plan ({reason}): {result.detail}"
        self.report.add("plan", text, reason=reason, **result.to_dict())
        return result.found

    def _goal_reached(self) -> bool:
        return self.task.goal_atoms <= self.task.init_atoms

    def _say(self, step: PlanStep) -> str:
        return self.phrases.describe(step, self.task)

    def _end(self, outcome: str, why: str) -> DKPromptRun:
        self.report.add("outcome", f"{outcome}: {why}", outcome=outcome)
        self.report.outcome = outcome
        self.report.explanation = why
        usage = getattr(self.checker.questioner, "usage", None)
        if usage is not None:
            self.report.usage = {
                "calls": usage.calls,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "seconds": round(usage.seconds, 3),
            }
        return DKPromptRun(outcome, self.task, list(self.executed), self.replans, self.report)


__all__ = ["DKPromptLoop", "DKPromptMode", "DKPromptRun", "ImageDirectory", "ImageSource"]
