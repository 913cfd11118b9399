"""The vision checks' rules without a server: which questions a step asks, what the
answers report (a skip never does), and a checks file that names its own mistakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.methods.dkprompt.questions import Answer, QuestionTemplates
from cowp_ros.methods.dkprompt.visual_situations import (
    checks_for_step,
    load_defects,
    situations_from,
)
from cowp_ros.planning import PlanStep
from cowp_ros.resources import share_path
from cowp_ros.tasks import get_task

DEFECTS = load_defects(share_path("config", "vlm_checker_checks.yaml"))


def test_each_object_of_the_step_is_asked_each_defect() -> None:
    checks = checks_for_step(PlanStep("fill_water", ("cup_1", "faucet_1")), DEFECTS)
    assert [c.question for c in checks[:3]] == [
        "Is the cup dirty or stained?",
        "Is the cup cracked?",
        "Is the cup chipped at its edge?",
    ]
    assert {c.object for c in checks} == {"cup_1", "faucet_1"}
    assert len(checks) == 2 * len(DEFECTS)


def test_yes_to_a_defect_is_its_situation_and_a_skip_says_nothing() -> None:
    checks = checks_for_step(PlanStep("grasp_cup", ("cup_1",)), DEFECTS)
    said = situations_from(checks, [Answer.YES, Answer.SKIP, Answer.NO])
    assert said == [("cup_1", "the cup is dirty")]
    with pytest.raises(CowpError, match="2 answers to 3 questions"):
        situations_from(checks, [Answer.YES, Answer.NO])


def test_with_the_domain_a_contradicted_precondition_is_reported() -> None:
    task = get_task("serve_water").load()
    templates = QuestionTemplates.load()
    step = PlanStep("fill_water", ("cup_1", "faucet_1"))
    checks = checks_for_step(step, DEFECTS, task, templates)
    preconditions = checks[2 * len(DEFECTS) :]
    assert preconditions
    answers = [Answer.NO] * (2 * len(DEFECTS)) + [
        Answer.YES if c.reported_on is Answer.NO else Answer.NO for c in preconditions
    ]
    assert situations_from(checks, answers) == []  # the image agrees with the plan
    contradicted = [c.reported_on for c in checks]
    contradicted[: 2 * len(DEFECTS)] = [Answer.NO] * (2 * len(DEFECTS))
    said = situations_from(checks, contradicted)
    assert len(said) == len(preconditions)
    assert all(
        text.endswith(f"shows {c.reported_on.value}.")
        for (_, text), c in zip(said, preconditions, strict=True)
    )
    # a variant the domain does not have: its defects only
    variant = PlanStep("fill_water__cup_as_bowl", ("bowl_1", "faucet_1"))
    assert len(checks_for_step(variant, DEFECTS, task, templates)) == 2 * len(DEFECTS)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("defects: {}\n", "'defects' must map"),
        ('defects: {dirty: {question: "Is it dirty?"}}\n', "needs exactly: question, situation"),
        ('defects: {dirty: {question: "Is it dirty?", situation: "it is"}}\n', "naming {object}"),
    ],
)
def test_a_checks_file_names_what_is_wrong(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(text)
    with pytest.raises(CowpError) as raised:
        load_defects(path)
    assert error in str(raised.value) and str(path) in str(raised.value)
