"""The run session: one end per run, told once, and one report written whatever ended it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.cowp.cancel import CancelToken, RunCancelledError
from cowp_ros.cowp.driver import DriveEnd, DriveResult, Outcome, RetryPolicy
from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.cowp.ports import StepOutcome
from cowp_ros.cowp.report import read_report
from cowp_ros.cowp.schedule import ScheduledRobot, ScheduledSituation
from cowp_ros.cowp.session import RunEnd, RunSession, end_of
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks.phrases import ActionPhrases


def tiny_loop(tiny: PlanningTask) -> OpenWorldPlanner:
    return build_loop(
        "cowp",
        tiny,
        ScriptedModel(default_yes_no=True),
        make_planner("pyperplan"),
        phrases=ActionPhrases(
            {"find_cup": "find {0}", "hold_cup": "hold {0}", "place_cup": "place {0} on {1}"}
        ),
        description="serving a cup",
        task_name="tiny",
    )


class FailingRobot:
    """Every step fails: the retry policy ends the run."""

    def perceive(self, next_step: PlanStep) -> list[Situation]:
        return []

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        return StepOutcome(False, reason="the gripper is stuck")


def test_the_end_is_told_once() -> None:
    assert RunEnd(Outcome.ABORTED, "aborted: x failed").told() == "aborted: x failed"
    assert RunEnd(Outcome.ABORTED, "the executor died").told() == "aborted: the executor died"
    assert RunEnd(Outcome.COMPLETED, "completed the plan").told() == "completed: completed the plan"


def test_a_completed_drive_ends_with_the_loops_explanation(tiny: PlanningTask) -> None:
    loop = tiny_loop(tiny)
    session = RunSession("tiny")
    end = session.drive(loop, ScheduledRobot([ScheduledSituation("a radio plays")]))
    assert end == RunEnd(Outcome.COMPLETED, loop.explanation())
    document = session.document()
    assert document["outcome"] == "completed" and document["explanation"] == end.explanation


def test_a_step_that_fails_too_often_names_the_step_and_the_reason(tiny: PlanningTask) -> None:
    session = RunSession("tiny", retries=RetryPolicy(max_retries=0))
    end = session.drive(tiny_loop(tiny), FailingRobot())
    assert end.outcome is Outcome.ABORTED
    assert end.explanation == "aborted: (find_cup cup_1) failed: the gripper is stuck"


def test_a_runaway_drive_aborts_with_the_drivers_reason(tiny: PlanningTask) -> None:
    result = DriveResult(DriveEnd.STOPPED, "stopped after 200 steps and situations")
    end = end_of(result, tiny_loop(tiny))
    assert end == RunEnd(Outcome.ABORTED, "aborted: stopped after 200 steps and situations")


@pytest.mark.parametrize(
    ("fault", "outcome", "explanation"),
    [
        (CowpError("the planner node died"), Outcome.ABORTED, "aborted: the planner node died"),
        (
            CowpError("the world has no plant_1", hint="give the world this task's objects"),
            Outcome.ABORTED,
            "aborted: the world has no plant_1 -> give the world this task's objects",
        ),
        (RunCancelledError("canceled while waiting"), Outcome.CANCELED, "canceled by the user"),
        (
            KeyError("oops"),
            Outcome.ABORTED,
            "aborted: internal error KeyError: 'oops' (see the log)",
        ),
    ],
)
def test_whatever_stops_the_composing_ends_the_run_with_a_reason_and_a_report(
    tmp_path: Path, fault: Exception, outcome: Outcome, explanation: str
) -> None:
    def compose():
        raise fault

    session = RunSession("serve_water")
    end = session.run(compose)
    assert end == RunEnd(outcome, explanation)
    assert bool(session.bug) == isinstance(fault, KeyError)  # a bug's traceback is kept
    report = read_report(session.write_new(tmp_path, "goal1", graph={"goal": "serve water"}))
    assert (report.task, report.outcome, report.explanation) == (
        "serve_water",
        outcome.value,
        explanation,
    )
    assert report.sections == {"graph": {"goal": "serve water"}}


def test_a_fault_mid_run_keeps_what_the_run_did_and_the_error(
    tiny: PlanningTask, tmp_path: Path
) -> None:
    """The CLI's account of a run stopped by an error: every event so far, the outcome
    it names, and the error with its hint."""

    class DyingRobot(FailingRobot):
        def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
            raise CowpError("the model server went away", hint="start it again")

    session = RunSession("tiny", planner="pyperplan")
    with pytest.raises(CowpError):
        session.drive(tiny_loop(tiny), DyingRobot())
    session.failed("error", CowpError("the model server went away", hint="start it again"))
    report = read_report(session.write(tmp_path / "r.json"))
    assert report.outcome == "error" and report.explanation == "the model server went away"
    assert report.events_of("plan")
    assert report.sections["error"]["hint"] == "start it again"


def test_the_model_that_answered_is_named_and_its_usage_counted(
    tiny: PlanningTask, tmp_path: Path
) -> None:
    """A loop whose questions went to a service (the task manager's) reports the model
    that answered there and what it spent, not the loop's own (none)."""
    session = RunSession("tiny")
    session.drive(tiny_loop(tiny), ScheduledRobot([]))
    usage = Usage()
    usage.calls, usage.prompt_tokens, usage.cache_hits = 3, 120, 2
    session.answered_by("qwen2.5-coder-1.5b", usage)
    report = read_report(session.write_new(tmp_path, "goal2"))
    assert report.model == "qwen2.5-coder-1.5b"
    assert (report.usage["calls"], report.usage["prompt_tokens"]) == (3, 120)
    assert report.usage["cache_hits"] == 2


def test_a_run_that_never_got_a_loop_still_reports_its_task(tmp_path: Path) -> None:
    session = RunSession("make_coffee", planner="pyperplan")
    session.answered_by("a model", Usage())  # no loop: nothing to name it in
    session.failed("error", CowpError("no task named make_coffee"))
    report = read_report(session.write(tmp_path / "r.json"))
    assert (report.task, report.planner, report.outcome) == ("make_coffee", "pyperplan", "error")
    assert report.events == [] and report.model == ""
