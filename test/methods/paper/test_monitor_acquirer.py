"""Prompt 1, 2 and 3 wrappers: answers, documented fallbacks, question order."""

from __future__ import annotations

from cowp_ros.cowp.answers import CandidateAssessment
from cowp_ros.cowp.roles import candidate_types, role_actions
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.acquirer import ROLE_ACTION, KnowledgeAcquirer
from cowp_ros.methods.paper.monitor import PlanMonitor
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import ActionPhrases

PHRASES = ActionPhrases(
    {"find_cup": "find {0}", "hold_cup": "hold {0}", "place_cup": "place {0} on {1}"}
)
HOLD = PlanStep("hold_cup", ("cup_1",))


def test_monitor_asks_prompt_1_once_per_question(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[("hold the cup, if the cup is dirty", False)])
    monitor = PlanMonitor(model, PHRASES)
    verdict = monitor.check_step(HOLD, "the cup is dirty.", tiny)
    assert verdict.question == "Is it suitable for a robot to hold the cup, if the cup is dirty?"
    assert not verdict.suitable and not verdict.unclear and not verdict.repeated
    again = monitor.check_step(PlanStep("hold_cup", ("cup_1",)), "the cup is dirty.", tiny)
    assert again.repeated and not again.suitable
    assert len(model.questions()) == 1


def test_monitor_unclear_answer_falls_back(tiny: PlanningTask) -> None:
    undecided = PlanMonitor(ScriptedModel(default_yes_no=None), PHRASES)
    verdict = undecided.check_step(HOLD, "the cup is dirty", tiny)
    assert verdict.unclear and verdict.suitable  # no evidence: keep the step
    graded = PlanMonitor(ScriptedModel(yes_no=[("", 0.2)]), PHRASES)
    verdict = graded.check_step(HOLD, "the cup is dirty", tiny)
    assert verdict.unclear and not verdict.suitable  # P(yes) 0.2 < 0.5


def test_role_actions_start_with_the_failing_one(tiny: PlanningTask) -> None:
    assert role_actions(tiny, "cup", ["hold_cup"]) == ["hold_cup", "find_cup", "place_cup"]
    assert role_actions(tiny, "table") == ["place_cup"]


def test_candidates_are_other_kinds_with_the_same_parent(tiny: PlanningTask) -> None:
    task = edits.add_object(tiny, "bowl_2", "bowl")
    task = edits.add_object(task, "cup_2", "cup")
    assert candidate_types(task, "cup") == [("bowl", "bowl_1")]
    assert candidate_types(task, "cup", exclude=["bowl"]) == []
    assert candidate_types(task, "table") == []  # no other place kind present


def test_acquirer_stops_at_the_first_no(tiny: PlanningTask) -> None:
    model = ScriptedModel(yes_no=[("hold a bowl", True), ("find a bowl", False)])
    acquirer = KnowledgeAcquirer(model, PHRASES)
    actions = role_actions(tiny, "cup", ["hold_cup"])
    result = acquirer.assess(tiny, "cup", actions, "bowl", "bowl_1")
    assert not result.accepted
    assert model.questions() == [
        "Is it suitable for a robot to hold a bowl?",
        "Is it suitable for a robot to find a bowl?",
    ]


def test_the_role_question_comes_first_and_needs_a_confident_yes(tiny: PlanningTask) -> None:
    role = r"^Can a bowl be used instead of the cup, in the task of serving water\?$"
    actions = role_actions(tiny, "cup", ["hold_cup"])
    hesitant = ScriptedModel(yes_no=[(role, 0.85)])  # P(yes) under ROLE_THRESHOLD (0.9)
    result = KnowledgeAcquirer(hesitant, PHRASES).assess(
        tiny, "cup", actions, "bowl", "bowl_1", "serving water"
    )
    assert not result.accepted and len(hesitant.questions()) == 1  # no action asked
    assert result.questions[0].action == ROLE_ACTION and result.questions[0].unclear
    sure = ScriptedModel(yes_no=[(role, 0.95)])
    result = KnowledgeAcquirer(sure, PHRASES).assess(
        tiny, "cup", actions, "bowl", "bowl_1", "serving water"
    )
    assert result.accepted and len(sure.questions()) == 1 + len(actions)
    assert result.confidence == 0.95  # it ranks the stand-in among those accepted
    lenient = KnowledgeAcquirer(ScriptedModel(yes_no=[(role, 0.85)]), PHRASES, role_threshold=0.8)
    assert lenient.assess(tiny, "cup", actions, "bowl", "bowl_1", "serving water").accepted
    plain_no = ScriptedModel(yes_no=[(role, False)])  # a text answer: "No" (P(yes) 0)
    assert (
        not KnowledgeAcquirer(plain_no, PHRASES)
        .assess(tiny, "cup", actions, "bowl", "bowl_1", "serving water")
        .accepted
    )


def test_acquirer_unclear_answer_rejects(tiny: PlanningTask) -> None:
    acquirer = KnowledgeAcquirer(ScriptedModel(default_yes_no=None), PHRASES)
    result = acquirer.assess(tiny, "cup", ["hold_cup"], "bowl", "bowl_1")
    assert not result.accepted and result.questions[0].unclear


def accepted(task: PlanningTask, kind: str) -> CandidateAssessment:
    """An assessment of `kind` in the cup's role that a yes-saying model accepted."""
    acquirer = KnowledgeAcquirer(ScriptedModel(default_yes_no=True), PHRASES)
    result = acquirer.assess(task, "cup", ["hold_cup"], kind, f"{kind}_1")
    assert result.accepted
    return result


def test_selection_asks_prompt_3_only_among_several(tiny: PlanningTask) -> None:
    model = ScriptedModel(choices=[("", "mug")])
    acquirer = KnowledgeAcquirer(model, PHRASES)
    only = acquirer.select([accepted(tiny, "bowl")], "cup", "serving water", "the cup is dirty")
    assert only.chosen == "bowl" and only.how == "only candidate"
    assert model.questions("choice") == []
    two = [accepted(tiny, "bowl"), accepted(tiny, "mug")]
    chosen = acquirer.select(two, "cup", "serving water", "the cup is dirty")
    assert chosen.chosen == "mug" and chosen.how == "model"
    assert model.questions("choice") == [
        "There are some objects, such as a bowl, a mug. Which is the most suitable to "
        "replace the cup in the task of serving water, if the cup is dirty?"
    ]


def test_selection_without_a_usable_answer_falls_back(tiny: PlanningTask) -> None:
    acquirer = KnowledgeAcquirer(ScriptedModel(default_choice=None), PHRASES)
    two = [accepted(tiny, "bowl"), accepted(tiny, "mug")]
    chosen = acquirer.select(two, "cup", "serving water", "the cup is dirty")
    assert chosen.chosen == "bowl"
    assert chosen.how.startswith("fallback")
