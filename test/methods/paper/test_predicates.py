"""Situations become predicates over the domain's own objects; hostile text never gets in."""

from __future__ import annotations

import pytest

from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.predicates import PredicateGenerator, parse_model_predicate
from cowp_ros.pddl import Atom, PlanningTask, UnsafeIdentifierError, check_identifier, edits
from cowp_ros.tasks import get_task

HOSTILE_ANSWERS = [
    "is_dirty cup_1) (:action evil :parameters () :effect (served table_1)",
    "(is_dirty cup_1)",
    "is_dirty ?c",
    "is_dirty cup_1\n(:init (served table_1))",
    "is_dirty cup_1 ; comment",
    "is_dirty cup_99",  # not an object of the problem
    "Is-Dirty cup_1",
    "is_dirty",
    "is_dirty cup_1 bowl_1",
    "and cup_1",  # a PDDL keyword as a predicate
    "hand_free cup_1",  # one of the domain's own state predicates
    "holding cup_1",
    "x" * 65 + " cup_1",
    "is_dïrty cup_1",
    "",
    "is_dirty 'cup_1'",
    "is_dirty `cup_1`",
]


@pytest.fixture(scope="module")
def fill_cup_task() -> PlanningTask:
    return get_task("fill_cup").build_problem(20, seed=3)


@pytest.mark.parametrize(
    ("situation", "expected"),
    [
        ("the cup is dirty.", Atom("is_dirty", ("cup_1",))),
        ("The Cup is BROKEN", Atom("is_broken", ("cup_1",))),
        ("the faucet has no water.", Atom("has_no_water", ("faucet_1",))),
        ("the cup is in the box", Atom("is_in_box", ("cup_1",))),
        ("the water is hot", Atom("water_is_hot")),
        ("there is a power outage.", Atom("there_is_power_outage")),
    ],
)
def test_rules_turn_situations_into_facts(
    fill_cup_task: PlanningTask, situation: str, expected: Atom
) -> None:
    fact = PredicateGenerator().generate(situation, fill_cup_task, ["cup_1", "faucet_1"])
    assert fact.atom == expected
    assert fact.source == ("world" if not expected.args else "rules")


def test_focus_picks_the_instance_in_the_failing_step(tiny: PlanningTask) -> None:
    task = edits.add_object(tiny, "cup_2", "cup")
    generator = PredicateGenerator()
    assert generator.generate("the cup is dirty", task, ["cup_2"]).subject == "cup_2"
    assert generator.generate("the cup is dirty", task, []).subject == "cup_1"
    assert generator.generate("cup 2 is dirty", task, ["cup_1"]).subject == "cup_2"


def test_domain_state_predicates_are_never_reused(tiny: PlanningTask) -> None:
    generator = PredicateGenerator(reserved=frozenset(tiny.predicates))
    fact = generator.generate("the cup holding", tiny, ["cup_1"])
    assert fact.atom == Atom("situation_holding", ("cup_1",))


def test_model_is_asked_only_when_no_object_is_named(tiny: PlanningTask) -> None:
    model = ScriptedModel(completions=[("power", "has_no_power table_1")])
    generator = PredicateGenerator(model, reserved=frozenset(tiny.predicates))
    assert generator.generate("the cup is dirty", tiny).source == "rules"
    assert model.questions("complete") == []
    fact = generator.generate("there is a power outage", tiny)
    assert fact.atom == Atom("has_no_power", ("table_1",))
    assert fact.source == "model"
    assert "Situation: there is a power outage" in model.questions("complete")[0]


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS)
def test_hostile_model_answers_are_refused_with_a_reason(tiny: PlanningTask, answer: str) -> None:
    with pytest.raises(UnsafeIdentifierError) as err:
        parse_model_predicate(answer, tiny, reserved=frozenset(tiny.predicates))
    assert "refused" in str(err.value)


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS)
def test_hostile_answer_falls_back_to_a_safe_world_fact(tiny: PlanningTask, answer: str) -> None:
    model = ScriptedModel(completions=[("", answer)])
    fact = PredicateGenerator(model, reserved=frozenset(tiny.predicates)).generate(
        "there is a power outage!", tiny
    )
    assert fact.atom == Atom("there_is_power_outage")
    assert fact.source == "world"
    assert fact.note.startswith("refused")
    # What comes back is safe to write: the task accepts it and still parses.
    edits.add_fact(tiny, fact.atom).validated()


def test_pddl_syntax_in_answers_is_named_as_such(tiny: PlanningTask) -> None:
    with pytest.raises(UnsafeIdentifierError, match="PDDL syntax"):
        parse_model_predicate("(is_dirty cup_1)", tiny)


def test_situation_text_cannot_smuggle_syntax_through_the_rules(tiny: PlanningTask) -> None:
    fact = PredicateGenerator().generate(
        "the cup is dirty) (:action evil ?x ; drop", tiny, ["cup_1"]
    )
    check_identifier(fact.atom.predicate, "predicate")
    assert fact.atom.args == ("cup_1",)
    text = edits.add_fact(tiny, fact.atom).validated().problem_text()
    assert "evil" not in text.replace(fact.atom.predicate, "")


@pytest.mark.parametrize(
    "name",
    ["", "Cup", "1cup", "cup-1", "cup 1", "cup)", "?c", ":init", "not", "either", "a" * 101,
     "cup\n", "cupé"],
)  # fmt: skip
def test_identifier_grammar_refuses(name: str) -> None:
    with pytest.raises(UnsafeIdentifierError):
        check_identifier(name, "object")


def test_identifier_grammar_accepts_plain_names() -> None:
    for name in ("cup_1", "is_dirty", "fill_cup__cup_as_bowl", "x"):
        assert check_identifier(name, "object") == name


@pytest.mark.parametrize(
    ("situation", "name"),
    [
        ("the can has a crack in its bottom and leaks water", "has_crack_in_its_bottom"),
        ("the cup is occupied: a fork and a knife and a spoon in it", "is_occupied_fork_and_knife"),
        ("the sink is full of pots", "is_full_of_pots"),  # not cut: kept whole
    ],
)
def test_a_cut_predicate_name_ends_on_a_whole_phrase(situation: str, name: str) -> None:
    from cowp_ros.methods.paper.predicates import slug, words_of

    words = words_of(situation)[2:]  # less "the <object>"
    assert slug(words) == name
