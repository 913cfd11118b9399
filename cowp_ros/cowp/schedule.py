"""A scripted robot: every step succeeds, and situations arrive when a schedule says.

This is the robot of `cowp run` and of the tests: "the cup is dirty" before step 2, or
before the first step whose action is `fill_cup`. A situation whose step never comes is
told in the report as never raised, so a typo in `--at` does not pass unnoticed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.driver import drive
from cowp_ros.cowp.events import EventKind
from cowp_ros.cowp.ports import StepOutcome, TaskLoop
from cowp_ros.cowp.report import CowpReport
from cowp_ros.cowp.situation import Situation
from cowp_ros.cowp.wording import sentence
from cowp_ros.pddl import edits
from cowp_ros.planning import PlanStep


@dataclass(frozen=True)
class ScheduledSituation:
    """A situation to raise while executing: before step number `at_step` (1-based) of
    the plan as executed, or before the first step whose action is `at_action`; with
    neither, before the first step."""

    text: str
    at_step: int | None = None
    at_action: str | None = None
    object: str = ""

    def due(self, next_step: PlanStep, steps_done: int) -> bool:
        if self.at_action is not None:
            return edits.base_action_name(next_step.action) == self.at_action
        return steps_done + 1 >= (self.at_step or 1)


class ScheduledRobot:
    """A `Robot` that does every step it is asked and raises each scheduled situation
    before the step it is due at."""

    def __init__(self, schedule: Sequence[ScheduledSituation]) -> None:
        self.pending = list(schedule)
        self.done = 0

    def perceive(self, next_step: PlanStep) -> list[Situation]:
        due = [s for s in self.pending if s.due(next_step, self.done)]
        for scheduled in due:
            self.pending.remove(scheduled)
        return [Situation(s.text, s.object, source="schedule") for s in due]

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        self.done += 1
        return StepOutcome(True)

    def report_never_raised(self, report: CowpReport) -> None:
        """Tell the report about each situation whose step never came."""
        for situation in self.pending:
            report.add(
                EventKind.SITUATION,
                f"never raised: {sentence(situation.text)} (its step did not come)",
                situation=situation.text,
                raised=False,
            )


def run_scheduled(loop: TaskLoop, schedule: Sequence[ScheduledSituation]) -> CowpReport:
    """Drive `loop` on a `ScheduledRobot` and return the finished report, with every
    situation whose step never came told as never raised."""
    robot = ScheduledRobot(schedule)
    drive(loop, robot)
    robot.report_never_raised(loop.report)
    return loop.finish_report()
