"""One run session: a task loop driven on a robot, ended once, reported once.

    session = RunSession(task, cancel=token, retries=RetryPolicy(max_retries=1))
    end = session.run(compose)          # compose() -> (loop, robot)
    path = session.write_new(folder, unique=goal_id, graph={...})

`cowp run` and the ROS task manager compose a run the same way: a loop built by the
method's factory, a robot (a scripted schedule, the executor node over ROS 2), a cancel
token, a retry policy and a listener that narrates; the session drives it with
`cowp_ros.cowp.driver.drive`, turns how the drive ended into one `RunEnd` (an outcome
and the line a person reads), and writes one report in the schema of
`cowp_ros.cowp.report` (atomic, never through a symlink).

The report is kept from the moment the loop exists, so whatever ends the run (a step
that fails, a node that dies, a bad flag, Ctrl-C, a bug) the report still holds every
plan, question and answer so far, and says how the run ended. Only what each entry
point alone knows is its own: the CLI's error record, the task manager's `graph`
section and the model its commonsense node named.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.cowp.cancel import NEVER, CancelToken, RunCancelledError
from cowp_ros.cowp.driver import DriveEnd, DriveListener, DriveResult, Outcome, RetryPolicy, drive
from cowp_ros.cowp.ports import Robot, TaskLoop
from cowp_ros.cowp.report import (
    CowpReport,
    report_document,
    strict_json,
    usage_summary,
    write_new_report,
    write_report,
)
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage
from cowp_ros.safe_text import clean


@dataclass(frozen=True)
class RunEnd:
    """How a run ended: its outcome and the explanation a person reads."""

    outcome: Outcome
    explanation: str

    def told(self) -> str:
        """The end as one line: "aborted: ...", never "aborted: aborted: ..."."""
        prefix = f"{self.outcome.value}:"
        if self.explanation.startswith(prefix):
            return self.explanation
        return f"{prefix} {self.explanation}"


def end_of(result: DriveResult, loop: TaskLoop) -> RunEnd:
    """The end of a drive as the user reads it: a step that failed too often names the
    step and the robot's reason; a finished loop explains itself."""
    if result.end is DriveEnd.CANCELED:
        return RunEnd(Outcome.CANCELED, "canceled by the user")
    if result.end is DriveEnd.STEP_FAILED:
        return RunEnd(Outcome.ABORTED, f"aborted: {result.failed_step} failed: {result.reason}")
    if result.end in (DriveEnd.COMPLETED, DriveEnd.NO_SOLUTION):
        return RunEnd(result.end.outcome, loop.explanation())
    return RunEnd(Outcome.ABORTED, f"aborted: {result.explanation}")


def error_record(err: BaseException) -> dict[str, str]:
    """An exception as a report holds it: its type, its message and the hint, if any."""
    if isinstance(err, CowpError):
        return {"type": type(err).__name__, "message": err.message, "hint": err.hint}
    return {"type": type(err).__name__, "message": str(err)[:2000], "hint": ""}


Compose = Callable[[], tuple[TaskLoop, Robot]]
"""Builds the run's loop (through the method's factory) and the robot it runs on."""


class RunSession:
    """One run from its task to its report, whoever started it."""

    def __init__(
        self,
        task: str,
        *,
        planner: str = "",
        cancel: CancelToken = NEVER,
        retries: RetryPolicy | None = None,
        listener: DriveListener | None = None,
    ) -> None:
        self.task = task
        self.planner = planner
        self.cancel = cancel
        self.retries = retries
        self.listener = listener
        self.report: CowpReport | None = None
        self._finish: Callable[[], CowpReport] | None = None
        self.end: RunEnd | None = None
        self.fault: tuple[str, dict[str, str]] | None = None
        self.bug: str = ""
        """The traceback of a bug that ended the run (for the caller's log)."""

    # ------------------------------------------------------------------ the run
    def track(self, report: CowpReport, finish: Callable[[], CowpReport] | None = None) -> None:
        """The run's live report; `finish` fills in its outcome and usage (the loop's
        `finish_report`) when the report is written."""
        self.report = report
        self._finish = finish

    def drive_loop(self, loop: TaskLoop, robot: Robot) -> DriveResult:
        """Drive `loop` on `robot` to its end and say how, in the driver's terms (the
        benchmark's trials read these); errors propagate; the report is tracked."""
        self.track(loop.report, loop.finish_report)
        return drive(loop, robot, cancel=self.cancel, retries=self.retries, listener=self.listener)

    def drive(self, loop: TaskLoop, robot: Robot) -> RunEnd:
        """Drive `loop` on `robot` to its end, as the user reads it (`end_of`)."""
        self.end = end_of(self.drive_loop(loop, robot), loop)
        return self.end

    def run(self, compose: Compose) -> RunEnd:
        """Compose the run and drive it; whatever stops it ends it with a reason: a
        cancel while composing (waiting for the world's objects) cancels it as one while
        driving does, a `CowpError` (a node that died, an unknown task) or a bug aborts
        it, and the bug's traceback is kept in `bug` for the caller's log."""
        try:
            loop, robot = compose()
            return self.drive(loop, robot)
        except RunCancelledError:  # while composing: the drive tells its own
            self.end = RunEnd(Outcome.CANCELED, "canceled by the user")
        except CowpError as err:  # with its fix: on the graph this line is all one reads
            fix = f" -> {err.hint}" if err.hint else ""
            self.end = RunEnd(Outcome.ABORTED, f"aborted: {err.message}{fix}")
        except Exception as err:  # a bug: still end the run with a reason, never silently
            self.bug = traceback.format_exc()
            self.end = RunEnd(
                Outcome.ABORTED,
                f"aborted: internal error {type(err).__name__}: {err} (see the log)",
            )
        return self.end

    def ended(self, end: RunEnd) -> None:
        """The run ends otherwise than its drive said (a cancel no client asked for)."""
        self.end = end

    def failed(self, outcome: str, err: BaseException) -> None:
        """The run was stopped by `err` before it ended; the report says `outcome` (the
        CLI's `error`, `interrupted`, `terminated`, `crashed`) and the error."""
        self.fault = (outcome, error_record(err))

    def answered_by(self, model: str, usage: Usage) -> None:
        """The model that answered the run's questions (behind a service, say) and what
        it spent, when the loop's own model is not the one that answered."""
        report = self.finished_report()
        if report is not None:
            report.model = model
            report.usage = usage_summary(usage)

    # --------------------------------------------------------------- the report
    def finished_report(self) -> CowpReport | None:
        """The loop's report with its outcome and usage filled in (None: no loop yet)."""
        if self.report is not None and self._finish is not None:
            finish, self._finish = self._finish, None
            with contextlib.suppress(Exception):  # the usage, if it can still be had
                self.report = finish()
        return self.report

    def document(self, **sections: Any) -> dict[str, Any]:
        """The report document (`report.report_document`): the loop's record, how
        the run ended, the error that stopped it if any, and `sections`."""
        report = self.finished_report()
        outcome = explanation = None
        error = None
        if self.fault is not None:
            outcome, error = self.fault
            explanation = clean(error["message"], newlines=False)
        elif self.end is not None:
            outcome, explanation = self.end.outcome.value, self.end.explanation
        return report_document(
            report,
            task=self.task,
            planner=self.planner,
            outcome=outcome,
            explanation=explanation,
            error=error,
            **sections,
        )

    def write(self, path: Path, **sections: Any) -> Path:
        """Write the report to `path` (replacing what is there); a CowpError names the
        path and the reason when it cannot be written."""
        return write_report(strict_json(self.document(**sections)) + "\n", path)

    def write_new(self, folder: Path, unique: str = "", **sections: Any) -> Path:
        """Write the report as a new file in `folder`, named after the task."""
        document = self.document(**sections)
        stem = str(document["task"]) or "run"
        return write_new_report(strict_json(document), folder, stem, unique)
