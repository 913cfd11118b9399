"""PlanMonitor's calibrated decision, with P(yes) values from a scripted model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.calibration.config import MonitorCalibration, write_calibration
from cowp_ros.methods.paper.calibration.scoring import TaskExample, get_variant
from cowp_ros.methods.paper.monitor import PlanMonitor
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

SPEC = get_task("fill_cup")
TASK = SPEC.load()
PHRASES = ActionPhrases(SPEC.phrases)
FILL = PlanStep("fill_cup", ("cup_1", "faucet_1"))


def model() -> ScriptedModel:
    """P(yes): the normal state 0.8, a dirty cup 0.3, a blue cup 0.5 (the small model's
    lean: both below the normal state, the blocker further)."""
    return ScriptedModel(
        yes_no=[
            (r"stop a robot .* if the cup is dirty", 0.9),
            (r"stop a robot .* if the cup is blue", 0.2),
            (r"stop a robot", 0.1),
            (r"if everything is as usual", 0.8),
            (r"if the cup is dirty", 0.3),
            (r"if the cup is blue", 0.5),
        ],
        name="tiny-model",
    )


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def calibrated(variant: str, threshold: float, **kwargs) -> MonitorCalibration:
    return MonitorCalibration("tiny-model", get_variant(variant), threshold, **kwargs)


def test_the_plain_yes_no_answer_decides_without_calibration() -> None:
    monitor = PlanMonitor(model(), PHRASES)  # no entry for tiny-model: plain decision
    assert monitor.calibration is None
    verdict = monitor.check_step(FILL, "the cup is blue", TASK)
    assert verdict.suitable and verdict.unclear and verdict.score is None
    assert "score" not in verdict.to_dict()


def test_plain_variant_blocks_at_its_threshold() -> None:
    # Scores: dirty -logit(0.3) = 0.85, blue -logit(0.5) = 0.
    monitor = PlanMonitor(model(), PHRASES, calibration=calibrated("plain", 0.5))
    dirty = monitor.check_step(FILL, "the cup is dirty", TASK)
    blue = monitor.check_step(FILL, "the cup is blue", TASK)
    assert not dirty.suitable and blue.suitable
    assert dirty.score == pytest.approx(-logit(0.3))
    assert dirty.to_dict()["variant"] == "plain" and dirty.to_dict()["threshold"] == 0.5
    strict = PlanMonitor(model(), PHRASES, calibration=calibrated("plain", 1.0))
    assert strict.check_step(FILL, "the cup is dirty", TASK).suitable


def test_contrast_subtracts_the_same_step_in_the_normal_state() -> None:
    scripted = model()
    monitor = PlanMonitor(scripted, PHRASES, calibration=calibrated("plain-contrast", 1.5))
    dirty = monitor.check_step(FILL, "the cup is dirty", TASK)
    blue = monitor.check_step(FILL, "the cup is blue", TASK)
    assert dirty.score == pytest.approx(logit(0.8) - logit(0.3))  # 2.23: blocked
    assert blue.score == pytest.approx(logit(0.8) - logit(0.5))  # 1.39: suitable
    assert not dirty.suitable and blue.suitable
    reference = [q for q in scripted.questions() if "everything is as usual" in q]
    assert reference == [
        "Is it suitable for a robot to fill the cup with water from the faucet, "
        "if everything is as usual?"
    ]  # asked once for the step, remembered after


def test_prevents_variant_asks_the_inverted_question() -> None:
    scripted = model()
    monitor = PlanMonitor(scripted, PHRASES, calibration=calibrated("prevents", 0.0))
    dirty = monitor.check_step(FILL, "the cup is dirty", TASK)
    assert dirty.question.startswith("Would it stop a robot from being able to fill the cup")
    assert not dirty.suitable and dirty.score == pytest.approx(logit(0.9))
    assert monitor.check_step(FILL, "the cup is blue", TASK).suitable


def test_without_p_yes_the_answer_text_decides_and_is_marked_unclear() -> None:
    scripted = ScriptedModel(yes_no=[(r"dirty", False), (r"blue", None)], name="tiny-model")
    monitor = PlanMonitor(scripted, PHRASES, calibration=calibrated("plain", 0.5))
    dirty = monitor.check_step(FILL, "the cup is dirty", TASK)  # scripted False: P(yes) 0.0
    assert not dirty.suitable and not dirty.unclear
    unsure = monitor.check_step(FILL, "the cup is blue", TASK)  # neither answer nor P(yes)
    assert unsure.suitable and unsure.unclear and unsure.score is None


def test_cross_task_examples_leave_out_the_asked_task() -> None:
    pool = tuple(
        TaskExample(task, f"Is it suitable for a robot to do {task} {n}?", answer, answer == "No")
        for task in ("fill_cup", "pour_coke", "set_table")
        for n, answer in ((1, "No"), (2, "Yes"))
    )
    scripted = model()
    seen: list[tuple[str, ...]] = []
    original = scripted.ask_yes_no

    def spy(question, *, system=None, examples=()):
        seen.append(tuple(e.question for e in examples))
        return original(question, system=system, examples=examples)

    scripted.ask_yes_no = spy  # type: ignore[method-assign]
    monitor = PlanMonitor(
        scripted, PHRASES, calibration=calibrated("crosstask", 0.5, examples=pool)
    )
    monitor.check_step(FILL, "the cup is dirty", TASK)
    assert seen and all("fill_cup" not in q for q in seen[0])
    assert len(seen[0]) == 4  # two other tasks, a blocking and a benign example each


def test_auto_reads_the_entry_for_the_model_name(no_default_calibration: Path) -> None:
    write_calibration(no_default_calibration, calibrated("plain", 0.5))
    monitor = PlanMonitor(model(), PHRASES)
    assert monitor.calibration is not None and monitor.calibration.threshold == 0.5
    assert not monitor.check_step(FILL, "the cup is dirty", TASK).suitable
    other = ScriptedModel(name="another-model")
    assert PlanMonitor(other, PHRASES).calibration is None
    assert PlanMonitor(model(), PHRASES, calibration=None).calibration is None


def test_both_contrast_averages_the_two_question_forms() -> None:
    monitor = PlanMonitor(model(), PHRASES, calibration=calibrated("both-contrast", 2.0))
    dirty = monitor.check_step(FILL, "the cup is dirty", TASK)
    plain = logit(0.8) - logit(0.3)
    prevents = logit(0.9) - logit(0.1)
    assert dirty.score == pytest.approx((plain + prevents) / 2)
    assert not dirty.suitable and dirty.variant == "both-contrast"
    assert dirty.question.startswith("Is it suitable for a robot to fill the cup")
    both = PlanMonitor(model(), PHRASES, calibration=calibrated("both", 0.0))
    blue = both.check_step(FILL, "the cup is blue", TASK)
    assert blue.score == pytest.approx((-logit(0.5) + logit(0.2)) / 2) and blue.suitable
