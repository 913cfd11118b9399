"""Prompt 3 offers only the most confident accepted kinds (a small model picks badly
among many)."""

from __future__ import annotations

import pytest

from cowp_ros.cowp.answers import CandidateAssessment, RoleQuestion
from cowp_ros.llm.language_model import YesNo
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.tasks.phrases import ActionPhrases

PHRASES = ActionPhrases({"fill_cup": "fill {0} with water from {1}"})


def assessed(kind: str, p_yes: float) -> CandidateAssessment:
    answer = YesNo(True, p_yes, "Yes")
    question = RoleQuestion("fill_cup", f"fill a {kind}?", answer, True, False)
    return CandidateAssessment(kind, f"{kind}_1", [question])


KINDS = {"broom": 0.96, "mug": 0.997, "glass": 0.996, "towel": 0.98, "bowl": 0.995, "pan": 0.99}


def test_only_the_most_confident_kinds_are_offered() -> None:
    model = ScriptedModel(choices=[("", "bowl")])
    acquirer = KnowledgeAcquirer(model, PHRASES, shortlist=3)
    accepted = [assessed(kind, p) for kind, p in KINDS.items()]
    selection = acquirer.select(accepted, "cup", "serving water", "the cup is dirty")
    assert selection.chosen == "bowl"
    assert selection.how == "model (among the 3 most confident of 6)"
    (question,) = model.questions("choice")
    assert "a mug, a glass, a bowl" in question
    assert "broom" not in question and "towel" not in question


def test_a_shortlist_of_one_needs_no_question() -> None:
    model = ScriptedModel()
    acquirer = KnowledgeAcquirer(model, PHRASES, shortlist=1)
    accepted = [assessed(kind, p) for kind, p in KINDS.items()]
    selection = acquirer.select(accepted, "cup", "serving water", "the cup is dirty")
    assert (selection.chosen, selection.how) == ("mug", "most confident")
    assert model.questions("choice") == []


def test_shortlist_must_be_positive() -> None:
    with pytest.raises(ValueError, match="shortlist"):
        KnowledgeAcquirer(ScriptedModel(), PHRASES, shortlist=0)
