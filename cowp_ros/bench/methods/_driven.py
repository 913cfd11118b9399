"""The benchmark's world as a robot, for the methods that run on COWP's driver.

COWP and the methods built on its loop (LLM-State, LLM-guided search, DKPROMPT) run a
trial exactly as `cowp run` and the task manager run a task: on a run session's drive
(`cowp_ros.cowp.session`, over `cowp_ros.cowp.driver.drive`), with the episode as the
robot (a trial's record is the episode's: the session writes no report). A situation
the world raises instead of doing a step reaches the loop as an observation; an episode that is
over (goal reached, out of attempts) stops the run at once.
"""

from __future__ import annotations

from cowp_ros.bench.simulator import Episode
from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.driver import DriveEnd, DriveResult, RetryPolicy
from cowp_ros.cowp.ports import StepOutcome, TaskLoop
from cowp_ros.cowp.session import RunSession
from cowp_ros.cowp.situation import Situation
from cowp_ros.planning import PlanStep

TRIAL_RETRIES = RetryPolicy(max_retries=2)
"""A step may fail twice in a row; the third failure ends the trial."""


class EpisodeRobot:
    """A `Robot` over one benchmark episode."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode

    def perceive(self, next_step: PlanStep) -> list[Situation]:
        return []  # the world raises its situations when a step is attempted

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        outcome = self.episode.execute(step)
        if self.episode.finished:
            return StepOutcome(outcome.executed, reason=outcome.reason, stop=True)
        if outcome.situation is not None:
            return StepOutcome(False, (Situation(outcome.situation, source="world"),))
        return StepOutcome(outcome.executed, reason=outcome.reason)


def run_on_episode(loop: TaskLoop, episode: Episode) -> DriveResult:
    """Drive `loop` through the episode; a run that ends before the world does gives up
    with the loop's reason."""
    session = RunSession(loop.report.task, retries=TRIAL_RETRIES)
    result = session.drive_loop(loop, EpisodeRobot(episode))
    if episode.finished:
        return result
    if result.end is DriveEnd.NO_SOLUTION:
        episode.give_up(loop.explanation())
    elif result.end is DriveEnd.STEP_FAILED:
        episode.give_up(result.explanation)
    else:
        episode.give_up(f"the loop stopped ({loop.phase.value})")
    return result
