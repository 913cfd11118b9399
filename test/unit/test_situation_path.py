"""What a situation's source knew reaches the loop; the inbox bounds what reaches it."""

from __future__ import annotations

import math

import pytest

from cowp_ros.cowp.events import EventKind, FeedbackPhase
from cowp_ros.cowp.inbox import InboxLimits, SituationInbox
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.predicates import PredicateGenerator
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import make_planner
from cowp_ros.safe_text import MAX_SITUATION_CHARS
from cowp_ros.tasks.phrases import ActionPhrases


def test_a_situation_is_tidied_and_capped() -> None:
    seen = Situation.of(Situation("  the \x1b[2J  cup\nis dirty ", "Cup 1", math.nan, "detector"))
    assert seen == Situation("the cup is dirty", "cup_1", None, "detector")
    assert Situation.of("the cup is dirty") == Situation("the cup is dirty")


def test_the_source_object_is_the_subject_and_no_model_is_asked(tiny: PlanningTask) -> None:
    model = ScriptedModel(default_yes_no=True)
    generator = PredicateGenerator(model, reserved=frozenset(tiny.predicates))
    # The sentence names the table first; the detector watched the cup.
    fact = generator.generate(Situation("the table is in the cup", "cup_1", 0.8), tiny)
    assert fact.subject == "cup_1" and fact.source == "source"
    assert fact.atom.args == ("cup_1",)
    assert "cup" not in fact.atom.predicate.split("_")
    # Nothing named in the sentence: the source's object still decides, still no model.
    fact = generator.generate(Situation("something is inside it", "cup"), tiny)
    assert fact.subject == "cup_1" and fact.source == "source"
    assert model.log == []


def test_when_the_sentence_and_the_source_agree_the_rule_decides(tiny: PlanningTask) -> None:
    fact = PredicateGenerator().generate(Situation("the cup is dirty", "cup_1"), tiny)
    assert str(fact.atom) == "(is_dirty cup_1)" and fact.source == "rules"


def test_an_object_the_problem_lacks_falls_back_to_the_sentence(tiny: PlanningTask) -> None:
    fact = PredicateGenerator().generate(Situation("the cup is dirty", "vase_9"), tiny)
    assert str(fact.atom) == "(is_dirty cup_1)" and fact.source == "rules"


def test_the_loop_reports_the_source_object_and_asks_no_model_for_the_fact(
    tiny: PlanningTask,
) -> None:
    model = ScriptedModel(yes_no=[("hold the cup, if something is inside it", False)])
    loop = build_loop(
        "cowp",
        tiny,
        model,
        make_planner("pyperplan"),
        phrases=ActionPhrases({"hold_cup": "hold {0}"}),
        description="serving a cup",
    )
    loop.plan()
    loop.step_done(True)
    loop.observe(Situation("something is inside it", "cup_1", 0.9, "detector"))
    saw = loop.report.of_kind(EventKind.SITUATION)[0]
    assert saw.data["object"] == "cup_1" and saw.data["confidence"] == 0.9
    fact = loop.report.of_kind(EventKind.PREDICATE)[0]
    assert fact.data["subject"] == "cup_1" and fact.data["source"] == "source"
    assert model.questions("complete") == []


def test_the_inbox_drops_repeats_and_counts_why() -> None:
    inbox = SituationInbox(InboxLimits(max_waiting=5, max_per_run=10, max_per_s=100))
    assert inbox.put("the cup is dirty")
    assert not inbox.put("The  cup is dirty")  # waiting already
    assert [a.situation.text for a in inbox.take()] == ["the cup is dirty"]
    assert not inbox.put("the cup is dirty")  # given to the loop already
    assert not inbox.put("   ")
    assert not inbox.put("x" * (MAX_SITUATION_CHARS + 1))
    assert inbox.dropped == {"repeated": 2, "empty": 1, "too long": 1}


def test_the_inbox_bounds_a_flood() -> None:
    now = [0.0]
    inbox = SituationInbox(InboxLimits(max_waiting=3, max_per_run=6, max_per_s=1.0), lambda: now[0])
    accepted = [inbox.put(f"flood {i}") for i in range(10)]  # all at once
    assert accepted == [True] * 3 + [False] * 7
    assert len(inbox.take()) == 3
    assert not inbox.put("too fast")  # the burst is spent
    now[0] += 10.0  # ten seconds later the bucket is full again
    assert [inbox.put(f"later {i}") for i in range(5)] == [True, True, True, False, False]
    assert inbox.dropped["over the per-run limit"] == 2
    inbox.reset()
    assert inbox.put("a new run") and inbox.dropped == {}


def test_inbox_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        InboxLimits(max_waiting=0)


def test_every_event_kind_has_a_label_and_a_feedback_rule() -> None:
    for kind in EventKind:
        assert len(kind.label) == 5
        assert kind.phase is None or isinstance(kind.phase, FeedbackPhase)
    assert EventKind.PLAN == "plan" and f"{EventKind.MONITOR}" == "monitor"
    assert not EventKind.STEP.told_as_feedback and EventKind.PDDL_CHANGE.phase is None
    assert {phase.mark for phase in FeedbackPhase} == {"plan", "check", "learn", "do", "end"}
