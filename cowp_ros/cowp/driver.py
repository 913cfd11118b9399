"""The one loop that runs a plan on a robot: perceive, execute, tell the task loop.

    result = drive(loop, robot, cancel=token, retries=RetryPolicy(max_retries=1))

`cowp run`, the benchmark's methods built on COWP, and the ROS task manager all run
their task loop through `drive`; they differ only in the `Robot` they pass (a
scripted schedule, the benchmark's simulated world, the executor node over ROS 2) and
in what they do with the result. Before each step the robot says what it noticed; each
noticed situation goes to the loop, which may change the plan, so the step to do is
asked for again. A step the robot could not do is told to the loop, which replans; a
step that fails more often in a row than the retry policy allows ends the run. The
cancel token is checked between any two of these, and the robot's own waits watch it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cowp_ros.cowp.cancel import NEVER, CancelToken, RunCancelledError
from cowp_ros.cowp.ports import Phase, Robot, StepOutcome, TaskLoop
from cowp_ros.cowp.situation import Situation
from cowp_ros.planning import PlanStep

DEFAULT_MAX_STEPS = 200
"""Iterations (steps tried or situations seen) before a run is stopped as runaway."""


@dataclass(frozen=True)
class RetryPolicy:
    """A step may fail `max_retries` times in a row (each failure replans); the next
    failure in a row ends the run. A step done resets the count."""

    max_retries: int = 2

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {self.max_retries}")


class Outcome(enum.StrEnum):
    """How a task ended, as a user reads it (`RunTask` results, `cowp run`, reports)."""

    COMPLETED = "completed"
    NO_SOLUTION = "no_solution"
    ABORTED = "aborted"  # something failed: a step, a node, the robot
    CANCELED = "canceled"

    @classmethod
    def parse(cls, text: str) -> Outcome:
        """An outcome from its name; anything unknown counts as aborted."""
        try:
            return cls(text)
        except ValueError:
            return cls.ABORTED


class DriveEnd(enum.Enum):
    """How a drive ended."""

    COMPLETED = "completed"  # the loop reached the goal
    NO_SOLUTION = "no_solution"  # the loop found nothing left to try
    STEP_FAILED = "step_failed"  # a step failed more often than the retry policy allows
    ROBOT_STOPPED = "robot_stopped"  # the robot said it can go on no more
    CANCELED = "canceled"  # the cancel token was set
    STOPPED = "stopped"  # the loop stopped in another phase, or the run ran away

    @property
    def outcome(self) -> Outcome:
        return {
            DriveEnd.COMPLETED: Outcome.COMPLETED,
            DriveEnd.NO_SOLUTION: Outcome.NO_SOLUTION,
            DriveEnd.CANCELED: Outcome.CANCELED,
        }.get(self, Outcome.ABORTED)


@dataclass
class DriveResult:
    """What happened, for the caller to turn into its own outcome."""

    end: DriveEnd
    explanation: str
    executed: list[PlanStep] = field(default_factory=list)
    failed_step: PlanStep | None = None
    failures: int = 0
    reason: str = ""  # the robot's last word on a failed or stopped step


@dataclass
class DriveListener:
    """Optional hooks for a caller that tells the run as it goes (ROS feedback)."""

    on_situation: Callable[[Situation, object], None] | None = None
    """A situation went to the loop; the second argument is the loop's reaction."""
    on_step: Callable[[PlanStep], None] | None = None
    """The robot is about to do this step."""
    on_outcome: Callable[[PlanStep, StepOutcome], None] | None = None
    """The robot reported on the step it was asked to do."""


def drive(
    loop: TaskLoop,
    robot: Robot,
    *,
    cancel: CancelToken = NEVER,
    retries: RetryPolicy | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    listener: DriveListener | None = None,
) -> DriveResult:
    """Plan if needed, then run the loop's steps on `robot` until the loop is done."""
    retries = retries or RetryPolicy()
    listener = listener or DriveListener()
    executed: list[PlanStep] = []
    failures = 0
    try:
        if loop.phase is Phase.NOT_PLANNED:
            cancel.check()
            loop.plan()
        for _ in range(max_steps):
            cancel.check()
            step = loop.next_step()
            if step is None:
                return _ended(loop, executed)
            seen = robot.perceive(step)
            if seen:
                _observe(loop, seen, cancel, listener)
                continue
            if listener.on_step:
                listener.on_step(step)
            outcome = robot.execute(step, loop.describe(step), cancel)
            cancel.check()
            if listener.on_outcome:
                listener.on_outcome(step, outcome)
            if outcome.stop:
                return DriveResult(
                    DriveEnd.ROBOT_STOPPED,
                    outcome.reason or "the robot stopped",
                    executed + ([step] if outcome.executed else []),
                    reason=outcome.reason,
                )
            if outcome.situations:
                _observe(loop, outcome.situations, cancel, listener)
                continue
            if outcome.executed:
                failures = 0
                executed.append(step)
                loop.step_done(True)
                continue
            failures += 1
            if failures > retries.max_retries:
                return DriveResult(
                    DriveEnd.STEP_FAILED,
                    f"{step} failed {failures} times",
                    executed,
                    failed_step=step,
                    failures=failures,
                    reason=outcome.reason,
                )
            loop.step_done(False)
        return DriveResult(
            DriveEnd.STOPPED, f"stopped after {max_steps} steps and situations", executed
        )
    except RunCancelledError as cancelled:
        return DriveResult(DriveEnd.CANCELED, str(cancelled) or "canceled", executed)


def _observe(
    loop: TaskLoop,
    situations: Sequence[Situation],
    cancel: CancelToken,
    listener: DriveListener,
) -> None:
    for situation in situations:
        cancel.check()
        reaction = loop.observe(situation)
        if listener.on_situation:
            listener.on_situation(situation, reaction)


def _ended(loop: TaskLoop, executed: list[PlanStep]) -> DriveResult:
    phase = loop.phase
    if phase is Phase.COMPLETED:
        return DriveResult(DriveEnd.COMPLETED, loop.explanation(), executed)
    if phase is Phase.NO_SOLUTION:
        return DriveResult(DriveEnd.NO_SOLUTION, loop.explanation(), executed)
    return DriveResult(DriveEnd.STOPPED, f"the loop stopped ({phase.value})", executed)
