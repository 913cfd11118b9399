"""LLM-State: the whitelist against hostile calls, the belief, and COWP behind it."""

from __future__ import annotations

import json

import pytest

from cowp_ros.cli import main
from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.llm_state.belief import Belief, BeliefPredicates, LLMStateTracker
from cowp_ros.methods.llm_state.calls import MAX_CALLS, ToolCall, parse_tool_calls
from cowp_ros.methods.llm_state.loop import BeliefLoop
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import edits
from cowp_ros.planning import make_planner
from cowp_ros.tasks import get_task


def call(function: str, /, **arguments: object) -> dict[str, object]:
    return {"name": function, "arguments": arguments}


def reply(*calls: object) -> str:
    return json.dumps(list(calls))


def test_whitelisted_calls_are_accepted_in_both_shapes() -> None:
    openai_shape = {
        "type": "function",
        "function": {
            "name": "note_failure",
            "arguments": json.dumps({"summary": "The cup slipped, twice."}),
        },
    }
    text = "```json\n" + reply(
        call("set_attribute", object="cup_1", attribute="cleanliness", value="Dirty"),
        openai_shape,
    ) + "\n```"  # fmt: skip
    parsed = parse_tool_calls(text)
    assert parsed.rejected == ()
    assert parsed.accepted == (
        ToolCall(
            "set_attribute", {"object": "cup_1", "attribute": "cleanliness", "value": "dirty"}
        ),
        ToolCall("note_failure", {"summary": "The cup slipped, twice."}),
    )


HOSTILE = [
    (call("exec", code="import os; os.system('rm -rf /')"), "unknown function"),
    (call("__import__", name="os"), "unknown function"),
    (call("os.system", command="ls"), "unknown function"),
    ({"name": None, "arguments": {}}, "unknown function"),
    (call("add_object", name="cup_9) (not (hand_free", kind="cup"), "PDDL syntax"),
    (call("add_object", name="../../etc/passwd", kind="cup"), "not a name"),
    (call("add_object", name="define", kind="cup"), "PDDL keyword"),
    (call("add_object", name="x" * 5000, kind="cup"), "longer than"),
    (
        call("set_attribute", object="cup_1", attribute="state", value="__import__('os')"),
        "PDDL syntax",
    ),
    (call("set_attribute", object="cup_1", attribute="state", value="a" * 10_000), "longer than"),
    (call("set_attribute", object="cup_1", attribute="state", value="dirty\n(:init)"), "PDDL"),
    (call("set_attribute", object="cup_1", attribute="state", value="$(reboot)"), "PDDL syntax"),
    (call("set_attribute", object="cup_1", attribute="state", value="rm -rf /"), "may only hold"),
    (call("set_attribute", object="cup_1", attribute="state", value=["dirty"]), "a string"),
    (call("set_attribute", object="cup_1", attribute="state", value=7), "a string"),
    (call("set_attribute", object="cup_1", attribute="state"), "missing value"),
    (
        call("set_attribute", object="cup_1", attribute="state", value="dirty", path="/etc"),
        "unexpected path",
    ),
    (call("note_failure", summary="ok; (:goal (and))"), "PDDL syntax"),
    ({"name": "note_failure", "arguments": "{not json"}, "not a JSON object"),
    ("set_attribute(cup_1, dirty)", "must be an object"),
]


@pytest.mark.parametrize(("item", "reason"), HOSTILE)
def test_hostile_calls_are_refused_with_a_reason(item: object, reason: str) -> None:
    parsed = parse_tool_calls(json.dumps([item]))
    assert parsed.accepted == ()
    (refused,) = parsed.rejected
    assert reason in refused.reason
    assert len(refused.shown) <= 80


def test_hostile_replies_as_a_whole_are_refused() -> None:
    huge = parse_tool_calls("[" + "1," * 100_000 + "1]")
    assert huge.accepted == () and "longer than" in huge.rejected[0].reason
    bomb = parse_tool_calls("[" * 3000 + "]" * 3000)
    assert bomb.accepted == () and "not a JSON list" in bomb.rejected[0].reason
    prose = parse_tool_calls("Sure! The cup is dirty, so I would mark it.")
    assert prose.accepted == () and "not a JSON list" in prose.rejected[0].reason
    code = parse_tool_calls("import os\nos.system('ls')")
    assert code.accepted == ()
    assert parse_tool_calls("[]") == parse_tool_calls("")
    many = parse_tool_calls(reply(*[call("clear_attribute", object="cup_1", attribute="a")] * 20))
    assert len(many.accepted) == MAX_CALLS
    assert all("more than" in r.reason for r in many.rejected) and len(many.rejected) == 4


def test_the_belief_refuses_calls_about_objects_it_does_not_hold() -> None:
    belief = Belief.from_task(get_task("fill_cup").load())
    assert belief.apply(
        ToolCall("set_attribute", {"object": "cup_7", "attribute": "a", "value": "b"})
    )
    assert belief.apply(ToolCall("add_object", {"name": "cup_1", "kind": "cup"}))
    assert belief.apply(ToolCall("clear_attribute", {"object": "cup_1", "attribute": "colour"}))
    assert belief.apply(ToolCall("add_object", {"name": "sponge_77", "kind": "sponge"})) is None
    assert belief.objects["sponge_77"].kind == "sponge"


def _two_cups():
    task = get_task("fill_cup").load()
    return edits.add_object(task, "cup_2", "cup")


def test_a_situation_becomes_an_attribute_a_sentence_and_a_fact_about_that_object() -> None:
    task = _two_cups()
    model = ScriptedModel(
        completions=[
            (
                "Event: the robot saw: the second cup has coffee stains",
                reply(
                    call("set_attribute", object="cup_2", attribute="cleanliness", value="dirty"),
                    call("set_attribute", object="cup_404", attribute="x", value="y"),
                    call("shell", command="ls"),
                ),
            )
        ]
    )
    tracker = LLMStateTracker(model, Belief.from_task(task))
    update = tracker.observe_situation("the second cup has coffee stains")
    assert [str(c) for c in update.applied] == [
        "set_attribute(object='cup_2', attribute='cleanliness', value='dirty')"
    ]
    assert {r.reason.split(" (")[0] for r in update.rejected} == {
        "no object 'cup_404' in the belief",
        "unknown function 'shell'",
    }
    assert tracker.situations() == ["the cup is dirty"]
    generator = BeliefPredicates(tracker, None, frozenset(task.predicates))
    fact = generator.generate("the cup is dirty", task, ["cup_1"])
    assert (str(fact.atom), fact.subject, fact.source) == ("(is_dirty cup_2)", "cup_2", "llm_state")
    plain = generator.generate("the faucet is broken", task)
    assert plain.source == "rules"
    prompt = model.log[0][1]
    assert "cup_2 (cup)" in prompt and "Event: the robot saw" in prompt


def test_outcomes_and_failures_reach_the_belief() -> None:
    model = ScriptedModel(
        completions=[("failed to", reply(call("note_failure", summary="could not hold the cup")))]
    )
    tracker = LLMStateTracker(model, Belief.from_task(get_task("fill_cup").load()))
    from cowp_ros.planning import PlanStep

    tracker.observe_outcome(PlanStep("hold_cup", ("cup_1",)), False, "hold the cup")
    assert tracker.belief.failures == ["could not hold the cup"]
    assert "earlier: could not hold the cup" in tracker.situation_text()
    assert "the robot failed to: hold the cup" in model.log[0][1]


def _cowp_model() -> ScriptedModel:
    return ScriptedModel(
        yes_no=[
            ("hold the cup, if the cup is dirty", False),
            ("if ", True),
            ("Can the robot still use", True),  # the grounded method's use question
            ("bowl", True),
        ],
        completions=[
            (
                "Event: the robot saw: there are coffee stains",
                reply(call("set_attribute", object="cup_1", attribute="state", value="dirty")),
            ),
            ("Event:", "[]"),
        ],
        default_yes_no=False,
    )


def test_cowp_behind_the_belief_blocks_the_dirty_cup_and_uses_a_stand_in() -> None:
    spec = get_task("fill_cup")
    model = _cowp_model()
    loop = build_loop("cowp", spec, model, make_planner("pyperplan"))
    schedule = [ScheduledSituation("there are coffee stains in it", at_action="hold_cup")]
    report = run_scheduled(BeliefLoop(loop), schedule)
    situations = [e.data["situation"] for e in report.of_kind("situation")]
    assert situations == ["the cup is dirty"]  # the belief's sentence, not the raw text
    facts = [e for e in report.of_kind("predicate") if "fact" in e.data]
    assert facts[0].data["fact"] == "(is_dirty cup_1)" and facts[0].data["source"] == "llm_state"
    assert any("belief: set_attribute" in e.text for e in report.of_kind("predicate"))
    assert report.outcome == "completed"
    assert report.usage["belief"]["objects"]["cup_1"]["attributes"] == {"state": "dirty"}


def test_a_silent_belief_still_passes_the_raw_situation_on() -> None:
    spec = get_task("fill_cup")
    model = _cowp_model()
    loop = build_loop("cowp", spec, model, make_planner("pyperplan"))
    report = run_scheduled(
        BeliefLoop(loop), [ScheduledSituation("the cup is dirty", at_action="hold_cup")]
    )
    assert [e.data["situation"] for e in report.of_kind("situation")] == ["the cup is dirty"]


def test_cowp_run_llm_state_flag(monkeypatch, capsys) -> None:
    import contextlib

    from cowp_ros.cli import run as run_cli

    model = _cowp_model()

    @contextlib.contextmanager
    def fake_open_model(args):
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    code = main(
        ["run", "fill_cup", "--llm-state", "--situation", "there are coffee stains in it",
         "--at", "hold_cup"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "belief: set_attribute(object='cup_1', attribute='state', value='dirty')" in out
    assert "saw: the cup is dirty" in out


@pytest.mark.parametrize(
    ("attribute", "value", "sentence"),
    [
        ("cleanliness", "dirty", "the cup is dirty"),
        ("stains", "coffee", "the cup has coffee stains"),
        ("rim", "has a crack", "the cup has a crack"),
        ("fill_level", "empty", "the cup is empty"),
    ],
)
def test_attributes_read_as_sentences_that_keep_their_meaning(attribute, value, sentence) -> None:
    from cowp_ros.methods.llm_state.belief import situation_sentence

    assert situation_sentence("cup", attribute, value) == sentence


def test_a_kind_named_instead_of_its_only_instance_resolves_to_it() -> None:
    belief = Belief.from_task(get_task("fill_cup").load())
    assert belief.resolve("faucet") == "faucet_1"
    set_dirty = ToolCall("set_attribute", {"object": "faucet", "attribute": "state", "value": "ok"})
    assert belief.apply(set_dirty) is None
    assert belief.objects["faucet_1"].attributes == {"state": "ok"}
    two = Belief.from_task(_two_cups())
    assert two.resolve("cup") == "cup"  # two cups: no guess
    assert two.apply(ToolCall("clear_attribute", {"object": "cup", "attribute": "a"}))
