"""Run a task with DKPROMPT checks: ask before each step, ask after it, replan on a mismatch.

    plan -> for each step: [pre] ask its preconditions on the image before it; believe
    the answers; a precondition seen false -> replan from the updated state
         -> execute (the robot says whether it worked; the state takes the effects)
         -> [post] ask its effects on the image after it; believe the answers; an
            effect not seen -> replan from the updated state

`DKPromptLoop` is a task loop (`cowp_ros.cowp.ports.TaskLoop`): COWP's driver runs it on
a robot like COWP's own loop. The checks before a step happen when the driver asks for
the next step, the checks after it when the driver reports the step done.

`mode` picks the paper's ablations: `pre` (preconditions only), `post` (effects only),
`both`. Images come from an `ImageSource`, one per check; a missing image leaves the
state as the plan expects (nothing was seen, so nothing is known). Every plan, question,
answer and state change lands in a `CowpReport`, so `cowp run` prints the same kind of
narrative as for COWP and `--report` writes the same JSON.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cowp_ros.cowp.driver import drive
from cowp_ros.cowp.events import EventKind
from cowp_ros.cowp.ports import Phase, Robot
from cowp_ros.cowp.report import CowpReport
from cowp_ros.cowp.schedule import ScheduledRobot
from cowp_ros.cowp.situation import Situation
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

    def image_for(self, attempt: int, step: PlanStep, moment: Moment) -> object | None:
        """What the vision questioner reads: an `EncodedImage` from the camera (or the
        scene in words, for a text world); None when there is nothing to look at."""
        ...


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
        self.outcome = ""
        self.last_situation: str | None = None  # the latest sentence the robot reported
        self._phase = Phase.NOT_PLANNED
        self._remaining: list[PlanStep] = []
        self._attempt = 0
        self._checked: PlanStep | None = None  # the next step, its preconditions checked

    # ---- the task loop ----------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    def plan(self) -> tuple[PlanStep, ...]:
        if self._plan("initial plan"):
            self._phase = Phase.EXECUTING
        else:
            self._end("no_solution", "the task has no plan")
        return tuple(self._remaining)

    def next_step(self) -> PlanStep | None:
        """The next step, once the camera agrees with its preconditions (mode pre)."""
        while self._phase is Phase.EXECUTING:
            if self._checked is not None:
                return self._checked
            if self._goal_reached():
                self._end("completed", f"goal reached after {len(self.executed)} step(s)")
                break
            if self._attempt >= self.max_attempts:
                self._end("gave_up", f"still not at the goal after {self.max_attempts} attempts")
                break
            if not self._remaining and not self._plan("the plan ran out before the goal"):
                self._end("no_solution", "no plan from the observed state")
                break
            self._attempt += 1
            step = self._remaining[0]
            if self.mode.checks_pre:
                checked = self._check(self._attempt, step, "pre")
                if checked.mismatches:
                    if not self._replan_after(checked, "a precondition is not seen"):
                        self._end("no_solution", "no plan from the observed state")
                    continue
            self._checked = step
        return None

    def observe(self, situation: Situation | str) -> None:
        """DKPROMPT learns what it sees from its images, not from sentences: a situation
        changes nothing by itself (which is what this method shows next to COWP). It is
        kept as `last_situation`, for an image source that describes the scene in words
        (the benchmark's text world)."""
        self.last_situation = Situation.of(situation).text
        self.report.add(
            EventKind.SITUATION,
            f"saw: {Situation.of(situation).text} (DKPROMPT checks images, not sentences)",
            situation=Situation.of(situation).text,
        )

    def step_done(self, success: bool = True) -> None:
        """The robot did (or failed) the checked step; check its effects (mode post)."""
        step = self._checked
        if step is None:
            raise CowpError("no step is under way")
        self._checked = None
        before = self.task
        self._remaining.pop(0)
        if success:
            self.task = edits.apply_action(self.task, step.action, step.args)
            self.executed.append(step)
        self.report.add(
            EventKind.STEP,
            f"{'did' if success else 'failed'}: {self._say(step)}",
            step=str(step),
            ok=success,
        )
        if self.mode.checks_post:
            checked = self._check(self._attempt, step, "post")
            if checked.mismatches:
                if not self._replan_after(checked, "an effect is not seen"):
                    self._end("no_solution", "no plan from the observed state")
                return
        if not success and self.task == before and not self._plan(f"{step} failed"):
            self._end("no_solution", f"{step} failed and nothing else works")

    def describe(self, step: PlanStep) -> str:
        return self._say(step)

    def explanation(self) -> str:
        return self.report.explanation

    def finish_report(self) -> CowpReport:
        return self.report

    def run(self, robot: Robot | None = None) -> DKPromptRun:
        """Drive the task on `robot` (default: one that does every step it is asked)."""
        drive(self, robot or ScheduledRobot(()), max_steps=4 * self.max_attempts)
        if not self.outcome:
            self._end("gave_up", "the run stopped before the task ended")
        return DKPromptRun(self.outcome, self.task, list(self.executed), self.replans, self.report)

    # ---- internals ------------------------------------------------------------------

    def _check(self, attempt: int, step: PlanStep, moment: Moment) -> CheckOutcome:
        image = self.images.image_for(attempt, step, moment)
        outcome = self.checker.check(self.task, step, moment, image)
        when = "before" if moment == "pre" else "after"
        if outcome.image_missing:
            self.report.add(
                EventKind.MONITOR,
                f"no image {when} {self._say(step)} (attempt {attempt}): nothing checked",
                method="dkprompt",
                moment=moment,
            )
        for skipped in outcome.questions.skipped:
            self.report.add(
                EventKind.MONITOR,
                f"not asked {when} {self._say(step)}: {skipped.literal} ({skipped.reason})",
                method="dkprompt",
                moment=moment,
                literal=str(skipped.literal),
                skipped=skipped.reason,
            )
        for check in outcome.checks:
            mark = " (MISMATCH)" if check.mismatch else ""
            self.report.add(
                EventKind.MONITOR,
                f"asked {when} {self._say(step)}: {check.question.question} -> "
                f"{check.answer.value}{mark}",
                method="dkprompt",
                moment=moment,
                **check.to_dict(),
            )
        for change in outcome.changes:
            self.report.add(
                EventKind.PDDL_CHANGE, str(change), change=change.change, fact=str(change.atom)
            )
        self.task = outcome.task
        return outcome

    def _replan_after(self, checked: CheckOutcome, what: str) -> bool:
        seen = "; ".join(str(c.question.literal) for c in checked.mismatches)
        return self._plan(f"{what}: {seen}")

    def _plan(self, reason: str) -> bool:
        result = self.planner.solve(self.task, self.planner_timeout_s)
        self.replans += 1 if self.report.of_kind(EventKind.PLAN) else 0
        if result.found:
            self._remaining = list(result.steps)
            steps = ", ".join(str(s) for s in result.steps) or "nothing left to do"
            text = f"planned ({reason}): {steps} [{result.seconds:.2f} s]"
        else:
            self._remaining = []
            text = f"no plan ({reason}): {result.detail}"
        self.report.add(EventKind.PLAN, text, reason=reason, **result.to_dict())
        return result.found

    def _goal_reached(self) -> bool:
        return self.task.goal_atoms <= self.task.init_atoms

    def _say(self, step: PlanStep) -> str:
        return self.phrases.describe(step, self.task)

    def _end(self, outcome: str, why: str) -> None:
        self.outcome = outcome
        self._phase = Phase.COMPLETED if outcome == "completed" else Phase.NO_SOLUTION
        self._remaining = []
        self._checked = None
        self.report.add(EventKind.OUTCOME, f"{outcome}: {why}", outcome=outcome)
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


__all__ = ["DKPromptLoop", "DKPromptMode", "DKPromptRun", "ImageDirectory", "ImageSource"]
