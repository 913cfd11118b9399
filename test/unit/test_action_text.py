"""Plan steps in English from per-action phrase rules."""

from __future__ import annotations

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.prompts import (
    acquirer_question,
    monitor_question,
    selection_question,
)
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases, noun

PHRASES = ActionPhrases({"fill_cup": "fill {0} with water from {1}", "find_cup": "find {0}"})


def test_steps_are_described_from_their_argument_types(fill_cup) -> None:
    task = fill_cup.load()
    assert PHRASES.describe(PlanStep("fill_cup", ("cup_1", "faucet_1")), task) == (
        "fill the cup with water from the faucet"
    )


def test_acquired_variants_use_their_base_phrase() -> None:
    step = PlanStep("fill_cup__cup_as_bowl", ("bowl_1", "faucet_1"))
    assert PHRASES.describe(step) == "fill the bowl with water from the faucet"


def test_candidate_gets_the_indefinite_article() -> None:
    text = PHRASES.describe_with("fill_cup", ("cup", "faucet"), 0, "ice_bucket")
    assert text == "fill an ice bucket with water from the faucet"
    assert noun("coffee_mug", "") == "coffee mug"


def test_an_action_without_a_rule_is_still_readable() -> None:
    assert PHRASES.describe(PlanStep("turnon_faucet", ("faucet_1",))) == (
        "turnon faucet the faucet"
    )


def test_bad_templates_are_refused() -> None:
    with pytest.raises(CowpError, match="use \\{0\\}"):
        ActionPhrases({"walk": "walk to {place}"})
    with pytest.raises(CowpError, match="more arguments"):
        ActionPhrases({"walk": "walk from {0} to {1}"}).describe(PlanStep("walk", ("room_1",)))


def test_the_three_prompts() -> None:
    assert monitor_question("hold the cup", "The cup is dirty.") == (
        "Is it suitable for a robot to hold the cup, if the cup is dirty?"
    )
    assert acquirer_question("fill a bowl with water from the faucet") == (
        "Is it suitable for a robot to fill a bowl with water from the faucet?"
    )
    assert selection_question(
        ["a bowl", "a mug"], "the cup", "serving water", "the cup is dirty."
    ) == (
        "There are some objects, such as a bowl, a mug. Which is the most suitable to "
        "replace the cup in the task of serving water, if the cup is dirty?"
    )


def test_every_dataset_task_reads_as_english() -> None:
    spec = get_task("pour_coke")
    step = PlanStep("pour_coke", ("coke_1", "glass_1", "table_1"))
    assert ActionPhrases(spec.phrases).describe(step, spec.load()) == (
        "pour the coke into the glass on the table"
    )
