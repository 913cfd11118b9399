"""Each method through the simulator, with a scripted model where one is needed."""

from __future__ import annotations

from bench_fixtures import episode, fill_cup, situation

from cowp_ros.bench import methods as registry
from cowp_ros.bench.metering import MeteredModel
from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import admissible_actions, best_match, similarity
from cowp_ros.bench.methods.progprompt import parse_program
from cowp_ros.bench.runner import Trial, run_one
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.reasoning.action_text import ActionPhrases
from cowp_ros.reasoning.scripted import ScriptedModel

DIRTY_CUP = situation("the cup is dirty.", "hold_cup")
SIX = {"cowp", "cw", "ek", "lmzsp", "progprompt", "inner_monologue"}


def context(model: ScriptedModel | None = None, seed: int = 0) -> MethodContext:
    spec, _, _ = fill_cup()
    return MethodContext(
        spec=spec,
        planner=make_planner("pyperplan"),
        model=MeteredModel(model) if model else None,
        seed=seed,
    )


def test_the_six_methods_are_discovered_with_their_protocol() -> None:
    found = registry.discover()
    assert set(found) >= SIX
    for cls in found.values():
        assert isinstance(cls.label, str) and isinstance(cls.uses_llm, bool) and cls.summary
    assert [m.name for m in registry.select(["cw", "cowp"])] == ["cw", "cowp"]


def test_cw_completes_without_situations_and_cannot_handle_one() -> None:
    quiet = episode()
    registry.discover()["cw"](context()).run(quiet.view())
    assert quiet.record.completed
    dirty = episode(DIRTY_CUP)
    registry.discover()["cw"](context()).run(dirty.view())
    assert not dirty.record.completed and "failed 3 times" in dirty.record.gave_up


def cowp_model() -> ScriptedModel:
    return ScriptedModel(
        yes_no=[
            (r"hold the cup, if the cup is dirty", False),
            (r"(hold|fill|place|find) a bowl", True),
            (r"if the cup is dirty", True),
            (r"a robot to \w+ an? ", False),  # no other stand-in
        ],
    )


def test_cowp_replaces_a_dirty_cup_with_a_bowl_and_counts_its_calls() -> None:
    model = cowp_model()
    ctx = context(model)
    ep = episode(DIRTY_CUP)
    registry.discover()["cowp"](ctx).run(ep.view())
    assert ep.record.completed, ep.record
    assert ep.record.substitutions == ["bowl as cup"]
    assert ctx.model is not None and ctx.model.usage.calls == model.usage.calls > 0


def test_a_trial_record_keeps_cowps_account_of_what_it_did() -> None:
    spec, world, annotation = fill_cup()
    planner = make_planner("pyperplan")
    reference = planner.solve(world, 30.0).steps
    trial = Trial("fill_cup", 0, 1, world, tuple(reference), (DIRTY_CUP,))
    cowp = registry.discover()["cowp"]
    record = run_one(cowp, spec, trial, annotation, planner, cowp_model())
    assert record["completed"], record["episode"]
    trace = record["trace"]
    assert any(line.startswith("situation: saw: the cup is dirty") for line in trace), trace
    assert any("learned: a bowl can take the cup's role" in line for line in trace), trace
    cw = run_one(registry.discover()["cw"], spec, trial, annotation, planner, None)
    assert cw["trace"] == []  # CW keeps no account of its own


def test_ek_uses_its_knowledge_only_for_covered_kinds() -> None:
    outcomes = {}
    for seed in range(12):
        method = registry.discover()["ek"](context(seed=seed))
        ep = episode(DIRTY_CUP)
        method.run(ep.view())
        outcomes["cup" in method.covered] = ep.record.completed
    assert outcomes == {True: True, False: False}


def test_lmzsp_maps_free_text_steps_to_admissible_actions_and_runs_open_loop() -> None:
    steps = [
        "find the faucet",
        "turn the faucet on",
        "find cup",
        "hold the cup",
        "fill the cup with water from the faucet",
        "put the cup on the table",
        "done",
    ]
    model = ScriptedModel(completions=[(rf"Step {i + 1}:$", text) for i, text in enumerate(steps)])
    method = registry.discover()["lmzsp"](context(model))
    ep = episode()
    method.run(ep.view())
    assert [s.action for s in method.plan] == [
        "find_faucet", "turnon_faucet", "find_cup", "hold_cup", "fill_cup", "place_cup"
    ]  # fmt: skip
    assert ep.record.completed


def test_progprompt_follows_an_assertion_to_its_stand_in() -> None:
    program = """    find_faucet('faucet_1')
    turnon_faucet('faucet_1')
    find_cup('cup_1')
    assert('cup_1' is usable) else: find_cup('bowl_1')
    hold_cup('cup_1')
    fill_cup('cup_1', 'faucet_1')
    place_cup('cup_1', 'table_1')
    wash('cup_1')"""
    method = registry.discover()["progprompt"](context(ScriptedModel(completions=[(".", program)])))
    ep = episode(DIRTY_CUP)
    method.run(ep.view())
    assert method.program.skipped == ["wash('cup_1')"]
    assert ep.record.completed and ep.record.substitutions == ["bowl as cup"]


def test_progprompt_parsing_keeps_only_present_objects_and_known_actions() -> None:
    parsed = parse_program(
        "find_cup('cup_1')\nfind_cup('mug_9')\nfly('cup_1')\n# note\n",
        {"find_cup"},
        {"cup_1"},
    )
    assert parsed.steps == [PlanStep("find_cup", ("cup_1",))]
    assert len(parsed.skipped) == 2


def test_inner_monologue_sees_the_situation_and_the_feedback() -> None:
    model = ScriptedModel(
        completions=[
            (r"find the bowl\. Success: yes\.\nRobot:$", "hold the bowl"),
            (
                r"hold the bowl\. Success: yes\.\nRobot:$",
                "fill the bowl with water from the faucet",
            ),
            (r"fill the bowl .*Success: yes\.\nRobot:$", "place the bowl on the table"),
            (r"Scene: the cup is dirty\.\nRobot:$", "use the bowl: find the bowl"),
            (r"find the cup\. Success: yes\.\nRobot:$", "hold the cup"),
            (r"turn on the faucet\. Success: yes\.\nRobot:$", "find the cup"),
            (r"find the faucet\. Success: yes\.\nRobot:$", "turn on the faucet"),
            (r"Robot:$", "find the faucet"),
        ]
    )
    method = registry.discover()["inner_monologue"](context(model))
    ep = episode(DIRTY_CUP)
    method.run(ep.view())
    assert "Scene: the cup is dirty." in method.monologue
    assert ep.record.completed, method.monologue
    # the robot's skills are the task's own actions over their kinds, never the variants
    prompt = model.questions("complete")[0]
    assert (
        "Skills: fill the cup with water from the faucet; find the cup; find the faucet; "
        "hold the cup; place the cup on the table; turn on the faucet.\nScene: " in prompt
    ), prompt


def test_string_similarity_prefers_the_action_that_was_meant() -> None:
    spec, world, _ = fill_cup()
    admissible = admissible_actions(world, ActionPhrases(spec.phrases))
    match, score = best_match("fill the bowl with water", admissible)
    assert match.step == PlanStep("fill_cup", ("bowl_1", "faucet_1"))
    assert similarity("hold the cup", "hold the cup") > score > similarity("x", "hold the cup")
