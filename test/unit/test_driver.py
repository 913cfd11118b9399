"""The one driver: perceive, execute, tell the loop; retries, cancel, a robot that stops."""

from __future__ import annotations

import threading

import pytest

from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.driver import DriveEnd, DriveListener, Outcome, RetryPolicy, drive
from cowp_ros.cowp.loop import OpenWorldPlanner, Phase
from cowp_ros.cowp.ports import StepOutcome
from cowp_ros.cowp.schedule import ScheduledRobot, ScheduledSituation, run_scheduled
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks.phrases import ActionPhrases

PHRASES = ActionPhrases(
    {"find_cup": "find {0}", "hold_cup": "hold {0}", "place_cup": "place {0} on {1}"}
)


def loop_for(task: PlanningTask, model: ScriptedModel | None = None) -> OpenWorldPlanner:
    return build_loop(
        "cowp",
        task,
        model or ScriptedModel(default_yes_no=True),
        make_planner("pyperplan"),
        phrases=PHRASES,
        description="serving a cup",
        task_name="tiny",
    )


class FailingRobot:
    """Fails the steps of one action `times` times in a row, then does them."""

    def __init__(self, action: str, times: int) -> None:
        self.action, self.left = action, times
        self.tried: list[str] = []

    def perceive(self, next_step: PlanStep) -> list[Situation]:
        return []

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        self.tried.append(step.action)
        if step.action == self.action and self.left > 0:
            self.left -= 1
            return StepOutcome(False, reason="the gripper slipped")
        return StepOutcome(True)


def test_every_step_done_completes_the_task(tiny: PlanningTask) -> None:
    loop = loop_for(tiny)
    result = drive(loop, ScheduledRobot([]))
    assert result.end is DriveEnd.COMPLETED and result.end.outcome is Outcome.COMPLETED
    assert [s.action for s in result.executed] == ["find_cup", "hold_cup", "place_cup"]
    assert loop.phase is Phase.COMPLETED


def test_failures_within_the_retry_policy_replan_and_go_on(tiny: PlanningTask) -> None:
    robot = FailingRobot("hold_cup", times=2)
    result = drive(loop_for(tiny), robot, retries=RetryPolicy(max_retries=2))
    assert result.end is DriveEnd.COMPLETED
    assert robot.tried.count("hold_cup") == 3


def test_one_failure_too_many_in_a_row_ends_the_run(tiny: PlanningTask) -> None:
    robot = FailingRobot("hold_cup", times=5)
    result = drive(loop_for(tiny), robot, retries=RetryPolicy(max_retries=1))
    assert result.end is DriveEnd.STEP_FAILED and result.end.outcome is Outcome.ABORTED
    assert result.failed_step == PlanStep("hold_cup", ("cup_1",))
    assert result.failures == 2 and result.reason == "the gripper slipped"
    assert result.explanation == "(hold_cup cup_1) failed 2 times"


def test_a_negative_retry_count_is_refused() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)


def test_situations_perceived_before_a_step_reach_the_loop_first(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[("hold the cup, if the cup is dirty", False)])
    seen: list[tuple[str, object]] = []
    robot = ScheduledRobot([ScheduledSituation("the cup is dirty", at_action="hold_cup")])
    result = drive(
        loop_for(tiny, model),
        robot,
        listener=DriveListener(on_situation=lambda s, r: seen.append((s.text, r))),
    )
    assert [text for text, _ in seen] == ["the cup is dirty"]
    assert result.end is DriveEnd.COMPLETED  # a bowl took the cup's role
    assert [s.action for s in result.executed][-1] == "place_cup__cup_as_bowl"


def test_a_cancel_from_another_thread_ends_the_run_between_steps(tiny: PlanningTask) -> None:
    token = CancelToken()

    class SlowRobot(ScheduledRobot):
        def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
            threading.Timer(0.01, token.cancel).start()
            cancel.wait(5.0)  # a robot's wait watches the token
            return StepOutcome(False, reason="canceled")

    result = drive(loop_for(tiny), SlowRobot([]), cancel=token)
    assert result.end is DriveEnd.CANCELED and result.end.outcome is Outcome.CANCELED
    assert result.executed == []


def test_a_cancelled_token_stops_the_loop_before_it_asks_the_model(tiny: PlanningTask) -> None:
    model = ScriptedModel(default_yes_no=True)
    token = CancelToken()
    loop = build_loop(
        "cowp",
        tiny,
        model,
        make_planner("pyperplan"),
        phrases=PHRASES,
        description="serving a cup",
        cancel=token,
    )
    loop.plan()
    token.cancel()
    robot = ScheduledRobot([ScheduledSituation("the cup is dirty")])
    assert drive(loop, robot, cancel=token).end is DriveEnd.CANCELED
    assert model.log == []


def test_a_robot_that_stops_ends_the_run_without_telling_the_loop(tiny: PlanningTask) -> None:
    class StoppingRobot(ScheduledRobot):
        def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
            return StepOutcome(True, reason="emergency stop", stop=True)

    loop = loop_for(tiny)
    result = drive(loop, StoppingRobot([]))
    assert result.end is DriveEnd.ROBOT_STOPPED and result.reason == "emergency stop"
    assert loop.executed_steps == ()  # the loop was not told: the world ended the run


def test_a_situation_whose_step_never_comes_is_reported(tiny: PlanningTask) -> None:
    report = run_scheduled(loop_for(tiny), [ScheduledSituation("late", at_step=9)])
    never = [e for e in report.of_kind("situation") if e.data.get("raised") is False]
    assert [e.data["situation"] for e in never] == ["late"]
    assert report.outcome == "completed"


def test_outcome_names_parse_and_unknown_ones_count_as_aborted() -> None:
    assert Outcome.parse("no_solution") is Outcome.NO_SOLUTION
    assert Outcome.parse("exploded") is Outcome.ABORTED
