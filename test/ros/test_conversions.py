"""Core types -> messages -> core types: nothing is lost on the way, and a response that
does not fit the request is refused, never half-read. (Probabilities and scores travel
as float32: the values here are exact in it.)"""

from __future__ import annotations

import math

import pytest

from cowp_interfaces.msg import Situation as SituationMsg
from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.cowp.answers import (
    CandidateAssessment,
    MonitorVerdict,
    PlanCheck,
    RoleQuestion,
    Selection,
)
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Choice, YesNo
from cowp_ros.methods.paper.predicates import SituationFact
from cowp_ros.pddl import Atom
from cowp_ros.planning import PlannerError, PlanResult, PlanStatus, PlanStep
from cowp_ros.ros.conversions import (
    TaskContext,
    assessment_from_response,
    check_request,
    plan_check_from_response,
    plan_result_from_response,
    put_assessment,
    put_plan_check,
    put_plan_result,
    put_selection,
    selection_from_response,
    situation_from_check_request,
    situation_from_msg,
    situation_to_msg,
    steps_from_msgs,
    steps_to_msgs,
    task_context_from_request,
)
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

FIND = PlanStep("find_cup", ("cup_1",))
FILL = PlanStep("fill_cup", ("cup_1", "faucet_1"))
DIRTY = Situation("the cup is dirty", "cup_1", None, "detector")


def verdict(step: PlanStep, suitable: bool, *, score: float | None = None) -> MonitorVerdict:
    answer = YesNo(suitable, 0.875 if suitable else 0.125, "Yes" if suitable else "No", cached=True)
    return MonitorVerdict(
        step,
        DIRTY.text,
        f"Is it suitable for a robot to do {step.action}, if the cup is dirty?",
        answer,
        suitable,
        unclear=False,
        score=score,
        threshold=None if score is None else 0.25,
        variant=None if score is None else "both",
    )


def test_steps_and_situations_survive_the_messages() -> None:
    assert steps_from_msgs(steps_to_msgs([FIND, FILL])) == [FIND, FILL]
    sure = Situation("a fork is in the cup", "cup_1", 0.75, "detector")
    assert situation_from_msg(situation_to_msg(sure)) == sure
    unsure = situation_from_msg(SituationMsg(text="x", confidence=math.nan))
    assert unsure.confidence is None


def test_a_blocking_check_with_its_fact_survives_a_check_plan_response() -> None:
    fact = SituationFact(DIRTY.text, Atom("is_dirty", ("cup_1",)), "cup_1", "source", "said")
    check = PlanCheck(
        (verdict(FIND, True, score=-1.0), verdict(FILL, False, score=2.0)), FILL, fact
    )
    response = CheckPlan.Response()
    put_plan_check(response, check, [FIND, FILL])
    back = plan_check_from_response(response, [FIND, FILL], DIRTY)
    assert back == check


def test_a_feasible_plain_check_survives_without_scores_or_fact() -> None:
    check = PlanCheck((verdict(FIND, True), verdict(FILL, True)))
    response = CheckPlan.Response()
    put_plan_check(response, check, [FIND, FILL])
    assert plan_check_from_response(response, [FIND, FILL], DIRTY) == check


def test_a_decision_made_once_crosses_as_it_was_made_without_a_verdict_per_step() -> None:
    """A method that decides once per situation asks one question, about the step it
    blocks; the steps before it get no made-up verdicts, and the reason crosses too."""
    place = PlanStep("place_cup", ("cup_1", "table_1"))
    fact = SituationFact(DIRTY.text, Atom("is_dirty", ("cup_1",)), "cup_1", "rules", "")
    check = PlanCheck((verdict(FILL, False),), FILL, fact, reason="decided: blocks by one question")
    response = CheckPlan.Response()
    put_plan_check(response, check, [FIND, FILL, place])
    assert list(response.questions) == [check.verdicts[0].question]
    assert list(response.question_steps) == [1] and response.failing_step == 1
    assert response.reason == "decided: blocks by one question"
    assert plan_check_from_response(response, [FIND, FILL, place], DIRTY) == check


def test_a_response_that_does_not_fit_the_request_is_refused() -> None:
    response = CheckPlan.Response()
    put_plan_check(response, PlanCheck((verdict(FIND, True), verdict(FILL, True))), [FIND, FILL])
    with pytest.raises(CowpError, match="does not match"):
        plan_check_from_response(response, [FIND], DIRTY)
    response.feasible, response.failing_step = False, 7
    with pytest.raises(CowpError, match="did not ask about"):
        plan_check_from_response(response, [FIND, FILL], DIRTY)


def test_a_fact_with_pddl_syntax_in_it_is_refused_here_too() -> None:
    response = CheckPlan.Response(feasible=True, predicate="(is_dirty cup_1) (hand_free)")
    with pytest.raises(CowpError):
        plan_check_from_response(response, [], DIRTY)


def test_the_request_carries_the_task_so_the_node_reads_no_registry() -> None:
    spec = get_task("fill_cup")
    phrases = ActionPhrases({"fill_cup": "pour water into {0} at {1}"})
    context = TaskContext("not_a_registered_task", "a task of my own", phrases, spec.load())
    request = check_request(context, [FILL], DIRTY, ["cup_1"])
    back = task_context_from_request(request)
    assert back.description == "a task of my own"
    assert back.phrases.describe(FILL, back.task) == "pour water into the cup at the faucet"
    assert situation_from_check_request(request) == DIRTY
    # Without the words, the registered task's own are read.
    request.task, request.task_description = "fill_cup", ""
    request.phrase_actions, request.phrase_templates = [], []
    assert task_context_from_request(request).description == spec.description


def test_an_assessment_and_a_selection_survive_acquire_knowledge() -> None:
    mug = CandidateAssessment("mug", "mug_1")
    for action, suitable in (("", True), ("fill_cup", True)):
        answer = YesNo(suitable, 0.875, "Yes")
        mug.questions.append(RoleQuestion(action, f"Q {action}?", answer, suitable, False))
    bowl = CandidateAssessment("bowl", "bowl_1")
    bowl.questions.append(RoleQuestion("", "Q bowl?", YesNo(False, 0.25, "No"), False, False))
    response = AcquireKnowledge.Response()
    put_assessment(response, mug)
    put_assessment(response, bowl)
    assert assessment_from_response(response, "mug", "mug_1") == mug
    assert assessment_from_response(response, "bowl", "bowl_1") == bowl
    chosen = Selection("mug", "Which one?", Choice(0, "mug", "mug"), "model")
    put_selection(response, chosen)
    assert selection_from_response(response, ["mug", "bowl"]) == chosen
    with pytest.raises(CowpError, match="not a candidate"):
        selection_from_response(response, ["bowl"])


def test_a_plan_result_survives_the_plan_response() -> None:
    result = PlanResult(PlanStatus.FOUND, "pyperplan", 0.25, (FIND, FILL), "ok")
    response = Plan.Response()
    put_plan_result(response, result)
    assert plan_result_from_response(response, "planner node") == result
    with pytest.raises(PlannerError, match="failed"):
        plan_result_from_response(Plan.Response(status="error", message="bad"), "x")


def test_a_yes_short_of_its_threshold_keeps_its_word_and_cut_off_over_the_wire() -> None:
    from cowp_interfaces.srv import AcquireKnowledge
    from cowp_ros.cowp.answers import ROLE_ACTION, CandidateAssessment, RoleQuestion
    from cowp_ros.llm.language_model import YesNo
    from cowp_ros.ros.conversions import assessment_from_response, put_assessment

    sent = CandidateAssessment("jug", "jug_1")
    question = "Can a jug be used instead of the can, in the task of watering the plant?"
    sent.questions.append(
        RoleQuestion(ROLE_ACTION, question, YesNo(True, 0.898, "Yes"), False, False, 0.9)
    )
    response = AcquireKnowledge.Response()
    put_assessment(response, sent)
    (got,) = assessment_from_response(response, "jug", "jug_1").questions
    assert got.answer.answer is True and not got.suitable
    assert got.threshold == 0.9
    assert got.cut_off == "P 0.898, needs 0.90"
