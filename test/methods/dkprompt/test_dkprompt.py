"""DKPROMPT: questions from the real dining domains, state updates, replanning, modes."""

from __future__ import annotations

import pytest
from dkprompt_fixtures import EveryStepImage, ScriptedQuestioner

from cowp_ros.errors import CowpError
from cowp_ros.methods.dkprompt.loop import DKPromptLoop, DKPromptMode
from cowp_ros.methods.dkprompt.questions import (
    Answer,
    CheckedLiteral,
    DKPromptChecker,
    QuestionTemplates,
    SkippedLiteral,
    VisualQuestion,
    apply_answers,
    question_for,
    questions_for,
)
from cowp_ros.pddl import Atom, Literal, edits
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import all_tasks, get_task
from cowp_ros.tasks.phrases import ActionPhrases

TEMPLATES = QuestionTemplates.load()


@pytest.mark.parametrize("name", sorted(all_tasks()))
def test_every_predicate_of_every_task_has_a_template_or_a_reason(name: str) -> None:
    task = get_task(name).load()
    for predicate in task.predicates:
        template = TEMPLATES.templates.get(predicate)
        assert template is not None, f"{name}: no DKPROMPT entry for {predicate}"
        assert template.question or (not template.checkable and template.why)


def test_preconditions_of_hold_cup_become_questions() -> None:
    task = get_task("fill_cup").load()
    asked = questions_for(task, PlanStep("hold_cup", ("cup_1",)), "pre", TEMPLATES)
    assert [q.question for q in asked.questions] == [
        "Can you see the cup in the image?",
        "Is the robot's gripper empty?",
    ]
    assert all(q.expected is Answer.YES for q in asked.questions)
    assert asked.skipped == ()


def test_a_deleted_fact_is_asked_as_its_opposite() -> None:
    task = get_task("fill_cup").load()
    asked = questions_for(task, PlanStep("hold_cup", ("cup_1",)), "post", TEMPLATES)
    by_literal = {str(q.literal): q for q in asked.questions}
    assert by_literal["(holding cup_1)"].expected is Answer.YES
    gripper = by_literal["(not (hand_free))"]
    assert gripper.question == "Is the robot's gripper empty?"
    assert gripper.expected is Answer.NO
    assert gripper.atom_true(Answer.NO) is False and gripper.atom_true(Answer.YES) is True


def test_the_negated_wording_is_used_when_the_template_has_one() -> None:
    task = get_task("battery_disassembly").load()
    step = PlanStep("unplug_connector", ("connector_1", "module_1", "cover_1"))
    asked = questions_for(task, step, "post", TEMPLATES)
    unplugged = next(q for q in asked.questions if q.literal.atom.predicate == "plugged_in")
    assert unplugged.question == "Is the connector 1 unplugged?"
    assert unplugged.expected is Answer.YES
    assert unplugged.atom_true(Answer.YES) is False


def test_predicates_a_camera_cannot_show_are_skipped_with_the_reason() -> None:
    task = get_task("plate_to_sink").load()
    step = PlanStep("walk_table", ("table_1", "room_1"))
    asked = questions_for(task, step, "pre", TEMPLATES)
    assert asked.questions == ()
    reasons = {str(s.literal): s.reason for s in asked.skipped}
    assert "localisation" in reasons["(in_room room_1)"]
    assert "not visually checkable" in reasons["(located table_1 room_1)"]


def test_a_predicate_cowp_added_has_no_template_and_is_skipped() -> None:
    task = get_task("fill_cup").load()
    task = edits.add_precondition(
        task, "hold_cup", Literal(Atom("is_dirty", ("?c",)), positive=False)
    )
    made = question_for(Literal(Atom("is_dirty", ("cup_1",)), False), task, TEMPLATES)
    assert isinstance(made, SkippedLiteral) and "no template" in made.reason


def test_answers_update_the_state_and_skips_change_nothing() -> None:
    task = get_task("fill_cup").load()
    found = VisualQuestion(Literal(Atom("found", ("cup_1",))), "Can you see the cup?", Answer.YES)
    free = VisualQuestion(Literal(Atom("hand_free", ())), "Is the gripper empty?", Answer.YES)
    water = VisualQuestion(
        Literal(Atom("water_running", ("faucet_1",))), "Is water running?", Answer.YES
    )
    assert Atom("hand_free") in task.init_atoms
    checks = [
        CheckedLiteral(found, Answer.YES),
        CheckedLiteral(free, Answer.NO),
        CheckedLiteral(water, Answer.SKIP),
    ]
    updated, changes = apply_answers(task, checks)
    assert Atom("found", ("cup_1",)) in updated.init_atoms
    assert Atom("hand_free") not in updated.init_atoms
    assert Atom("water_running", ("faucet_1",)) not in updated.init_atoms
    assert [c.change for c in changes] == ["add_fact", "remove_fact"]
    assert [c.mismatch for c in checks] == [False, True, False]


def _loop(name: str, questioner: ScriptedQuestioner, mode: DKPromptMode, images=None):
    spec = get_task(name)
    return DKPromptLoop(
        spec.load(),
        planner=make_planner("pyperplan"),
        checker=DKPromptChecker(questioner, TEMPLATES),
        images=images or EveryStepImage(),
        mode=mode,
        phrases=ActionPhrases(spec.phrases),
    )


def test_a_precondition_seen_false_updates_the_state_and_replans() -> None:
    # The cup is not where the robot found it: the first look says it is not visible.
    questioner = ScriptedQuestioner([(r"see the cup", Answer.NO, 1)])
    run = _loop("fill_cup", questioner, DKPromptMode.PRE).run()
    assert run.outcome == "completed"
    executed = [str(s) for s in run.executed]
    assert executed.count("(find_cup cup_1)") == 2, executed
    changes = [e.text for e in run.report.of_kind("pddl_change")]
    assert any("removed fact (found cup_1)" in c for c in changes)
    plans = run.report.of_kind("plan")
    assert len(plans) == 2 and "precondition is not seen: (found cup_1)" in plans[1].text
    assert run.replans == 1
    assert any("MISMATCH" in e.text for e in run.report.of_kind("monitor"))


def test_an_effect_not_seen_updates_the_state_and_replans() -> None:
    questioner = ScriptedQuestioner([(r"filled with water", Answer.NO, 1)])
    run = _loop("fill_cup", questioner, DKPromptMode.POST).run()
    assert run.outcome == "completed"
    executed = [s.action for s in run.executed]
    assert executed.count("fill_cup") == 2, executed
    assert any(
        "effect is not seen: (filled_with_water cup_1)" in e.text
        for e in run.report.of_kind("plan")
    )
    assert run.task.goal_atoms <= run.task.init_atoms


@pytest.mark.parametrize(
    ("mode", "moments"),
    [
        (DKPromptMode.PRE, {"pre"}),
        (DKPromptMode.POST, {"post"}),
        (DKPromptMode.BOTH, {"pre", "post"}),
    ],
)
def test_the_mode_switches_choose_which_checks_run(mode: DKPromptMode, moments: set[str]) -> None:
    images = EveryStepImage()
    questioner = ScriptedQuestioner(default=Answer.SKIP)  # sees nothing clearly
    run = _loop("set_table", questioner, mode, images).run()
    assert run.outcome == "completed"
    assert {moment for _, _, moment in images.requests} == moments
    asked = {e.data["moment"] for e in run.report.of_kind("monitor") if "answer" in e.data}
    assert asked == moments
    assert run.replans == 0


def test_without_an_image_nothing_is_asked_and_the_plan_goes_on() -> None:
    class NoImages:
        def image_for(self, attempt, step, moment):
            return None

    questioner = ScriptedQuestioner(default=Answer.NO)
    run = _loop("fill_cup", questioner, DKPromptMode.BOTH, NoImages()).run()
    assert run.outcome == "completed"
    assert questioner.asked == []
    assert any("no image" in e.text for e in run.report.of_kind("monitor"))


def test_a_camera_that_never_sees_the_cup_ends_in_a_bounded_give_up() -> None:
    questioner = ScriptedQuestioner([(r"see the cup", Answer.NO, None)])
    loop = _loop("fill_cup", questioner, DKPromptMode.PRE)
    loop.max_attempts = 12
    run = loop.run()
    assert run.outcome == "gave_up"
    assert "12 attempts" in run.report.explanation


def test_a_bad_mode_name_is_a_clear_error() -> None:
    with pytest.raises(CowpError, match="pre, post or both"):
        DKPromptMode.parse("during")
