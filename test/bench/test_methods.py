"""Each method through the simulator, with a scripted model where one is needed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from bench_fixtures import DATASET, situation, world

from cowp_ros.bench import methods as registry
from cowp_ros.bench.metering import MeteredModel
from cowp_ros.bench.methods import GPT3_ANSWERS, MethodContext
from cowp_ros.bench.methods._common import Translator, action_roles, admissible_actions
from cowp_ros.bench.methods.ek import kind_of, parse_answers, stand_ins
from cowp_ros.bench.methods.progprompt import parse_program
from cowp_ros.bench.runner import outside_knowledge
from cowp_ros.bench.simulator import ScheduledEvent
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

DIRTY_CUP = situation("the cup is dirty.", "hold_cup")
SIX = {"cowp", "cw", "ek", "lmzsp", "progprompt", "inner_monologue"}


FILL_CUP_ANSWERS = (DATASET / "gpt3_answers" / "experience_task_4.txt").read_text()


def context(model: ScriptedModel | None = None, seed: int = 0, **options: object) -> MethodContext:
    return MethodContext(
        spec=get_task("fill_cup"),
        planner=make_planner("pyperplan"),
        model=MeteredModel(model) if model else None,
        seed=seed,
        options={GPT3_ANSWERS: FILL_CUP_ANSWERS, **options},
    )


def test_the_six_methods_are_discovered_with_their_protocol() -> None:
    found = registry.discover()
    assert set(found) >= SIX
    for cls in found.values():
        assert isinstance(cls.label, str) and isinstance(cls.uses_llm, bool) and cls.summary
    assert [m.name for m in registry.select(["cw", "cowp"])] == ["cw", "cowp"]


def test_cw_completes_without_situations_and_cannot_handle_one() -> None:
    quiet = world()
    registry.discover()["cw"](context()).run(quiet.view())
    assert quiet.record.completed
    dirty = world(DIRTY_CUP)
    registry.discover()["cw"](context()).run(dirty.view())
    assert not dirty.record.completed and "failed 3 times" in dirty.record.gave_up


# ---- the text -> action translation (LMZSP) -------------------------------------------


def translator() -> Translator:
    spec = get_task("fill_cup")
    return Translator(admissible_actions(world().problem, ActionPhrases(spec.phrases)))


def test_free_text_steps_land_on_the_action_they_mean() -> None:
    translate = translator().translate
    assert translate("pick up the bowl").action.step == PlanStep("hold_cup", ("bowl_1",))
    assert translate("fill the bowl with water").action.step == PlanStep(
        "fill_cup", ("bowl_1", "faucet_1")
    )
    # a step that names no stand-in means the usual objects, never a swap to another place
    assert translate("fill the cup with water").action.step == PlanStep(
        "fill_cup", ("cup_1", "faucet_1")
    )
    assert translate("switch the tap on").action.step == PlanStep("turnon_faucet", ("faucet_1",))
    exact = translate("find the faucet")
    assert exact.action.text == "find the faucet" and exact.similarity > 0.99


def test_two_groundings_that_read_the_same_keep_the_typed_one() -> None:
    spec = get_task("fill_cup")
    admissible = admissible_actions(world().problem, ActionPhrases(spec.phrases))
    texts = [a.text for a in admissible]
    assert len(texts) == len(set(texts))
    typed = {a.step for a in admissible if not a.swapped}
    assert PlanStep("hold_cup", ("cup_1",)) in typed
    swapped = {a.step: a.swapped for a in admissible if a.swapped}
    assert swapped[PlanStep("hold_cup", ("bowl_1",))] == "bowl"


# ---- LMZSP ---------------------------------------------------------------------------


def lmzsp_model(steps: list[str]) -> ScriptedModel:
    return ScriptedModel(completions=[(rf"Step {i + 1}:$", t) for i, t in enumerate(steps)])


def test_lmzsp_translates_each_step_and_runs_the_plan_open_loop() -> None:
    steps = [
        "find the faucet",
        "turn the faucet on",
        "find the faucet",  # a repeat does not end the plan
        "look for a cup",
        "hold the cup in your hand",
        "fill the cup with water from the tap",
        "put the cup on the table",
        "done",
    ]
    model = lmzsp_model(steps)
    method = registry.discover()["lmzsp"](context(model))
    ep = world()
    method.run(ep.view())
    assert [s.action for s in method.plan] == [
        "find_faucet", "turnon_faucet", "find_faucet", "find_cup", "hold_cup", "fill_cup",
        "place_cup",
    ]  # fmt: skip
    assert ep.record.completed
    # the translation, not the raw text, is what the model sees next; the model continues
    # the plan as plain text when its client can (the paper's completion models)
    prompts = model.questions("continue_text")
    assert "Step 2: turn on the faucet\nStep 3:" in prompts[2]
    # the demonstrations are the domain's dev tasks other than this one
    assert (
        "Task: cleaning the dirty area beside a table with a vacuum\nActions: clean an area "
        in prompts[0]
    )
    assert prompts[0].count("Task: filling a cup with water from the faucet") == 1
    assert any("'hold the cup in your hand' -> (hold_cup cup_1)" in line for line in method.trace())
    assert "plan ended: step 8: the model wrote 'done'" in method.trace()
    # the answers word for word
    assert method.trace()[-8:] == [f"answer {i}: {t!r}" for i, t in enumerate(steps, start=1)]


def pour_coke_task() -> tuple[PlanningTask, ActionPhrases]:
    spec = get_task("pour_coke")
    present = ["coke_1", "glass_1", "table_1", "cup_1", "juice_1", "counter_1"]
    return keep_objects(spec.load_house(), present), ActionPhrases(spec.phrases)


def test_no_object_stands_in_for_another_role_of_the_task() -> None:
    task, phrases = pour_coke_task()
    admissible = {a.step for a in admissible_actions(task, phrases)}
    # the glass has its own role: never grasped as if it were the coke
    assert PlanStep("grasp_coke", ("glass_1",)) not in admissible
    assert Translator(admissible_actions(task, phrases)).translate(
        "hold the glass"
    ).action.step != PlanStep("grasp_coke", ("glass_1",))
    # a cup has no role in pouring coke: it may still stand in for the glass
    assert PlanStep("move_glass", ("cup_1", "table_1")) in admissible


def test_lmzsp_is_told_the_actions_with_their_roles() -> None:
    task, phrases = pour_coke_task()
    assert action_roles(task, phrases) == [
        "find a coke", "find a glass", "grasp a coke", "move a glass to a table",
        "place a glass on a table", "pour a coke into a glass on a table",
        "put an item down on a place",
    ]  # fmt: skip
    model = lmzsp_model(["find the cup", "done"])
    method = registry.discover()["lmzsp"](context(model))
    method.run(world().view())
    prompt = model.questions("continue_text")[0]
    assert prompt.endswith(
        "Task: filling a cup with water from the faucet\nActions: fill a cup with water from "
        "a faucet; find a cup; find a faucet; hold a cup; place a cup on a table; put an item "
        "down on a place; turn on a faucet.\nStep 1:"
    )


def test_lmzsp_asks_a_chat_client_for_each_step() -> None:
    class ChatOnly:
        """A client without plain-text continuation (a chat-only server)."""

        name = "chat-only"

        def __init__(self) -> None:
            self.inner = lmzsp_model(["find the cup", "done"])

        def complete(self, prompt: str, **how: object) -> str:
            return self.inner.complete(prompt)

    ctx = context()
    ctx.model = ChatOnly()  # type: ignore[assignment]
    method = registry.discover()["lmzsp"](ctx)
    method.run(world().view())
    assert [s.action for s in method.plan] == ["find_cup"]


def test_lmzsp_cannot_recover_from_a_situation() -> None:
    steps = ["find the cup", "hold the cup", "done"]
    ep = world(DIRTY_CUP)
    registry.discover()["lmzsp"](context(lmzsp_model(steps))).run(ep.view())
    assert not ep.record.completed and "cannot recover" in ep.record.gave_up


# ---- Inner Monologue -----------------------------------------------------------------


def monologue_model() -> ScriptedModel:
    """Prefers, after each line of the monologue, the skill a sensible robot would do."""
    return ScriptedModel(
        continuations=[
            (r"Scene: the cup is dirty\.\nRobot:$", " find the bowl."),
            (r"Robot: find the bowl\.\nSuccess: yes\.\nRobot:$", " hold the bowl."),
            (r"Robot: hold the bowl\.\nSuccess: yes\.\nRobot:$",
             " fill the bowl with water from the faucet."),
            (r"Robot: fill the bowl .*\nSuccess: yes\.\nRobot:$", " place the bowl on the table."),
            (r"Robot: find the cup\.\nSuccess: yes\.\nRobot:$", " hold the cup."),
            (r"Robot: turn on the faucet\.\nSuccess: yes\.\nRobot:$", " find the cup."),
            (r"Robot: find the faucet\.\nSuccess: yes\.\nRobot:$", " turn on the faucet."),
            (r"Scene: [a-z, ]+\.\nRobot:$", " find the faucet."),
        ]
    )  # fmt: skip


def test_inner_monologue_scores_skills_with_its_three_kinds_of_feedback() -> None:
    model = monologue_model()
    method = registry.discover()["inner_monologue"](context(model))
    ep = world(DIRTY_CUP)
    method.run(ep.view())
    assert ep.record.completed, method.monologue
    assert ep.record.executed[-1] == "(place_cup bowl_1 table_1)"
    # passive scene description, active scene description (the situation), success
    first = model.log[0][1]
    assert (
        "Task: filling a cup with water from the faucet.\nScene: bowl, cup, faucet, fork" in first
    )
    # the situation was seen before "hold the cup", which was not attempted: a scene
    # line in its place, no verdict on a step the robot never did
    assert method.monologue[6:8] == ["Scene: the cup is dirty.", "Robot: find the bowl."]
    assert "Success: no." not in method.monologue
    # every question is a next-token question (SayCan scoring), never free text
    assert {kind for kind, _, _ in model.log} == {"next_tokens"}
    assert sum(method.calls) == model.usage.calls


def test_inner_monologue_only_scores_skills_the_robot_can_do_now() -> None:
    model = ScriptedModel(continuations=[(r"Robot:$", " hold the cup.")])
    method = registry.discover()["inner_monologue"](context(model))
    ep = world()
    method.run(ep.view())
    # "hold the cup" needs the cup found first: it is offered only once it can be done,
    # so no attempt ever fails on a precondition
    assert ep.record.executed[:2] == ["(find_cup cup_1)", "(hold_cup cup_1)"]
    assert ep.record.failed == []
    assert not ep.record.completed


def test_inner_monologue_logs_a_harmless_remark_as_a_scene_line_not_a_failure() -> None:
    remark = ScheduledEvent("distractor", "d/0", "the cup is blue.", "hold_cup", 0)
    model = ScriptedModel(
        continuations=[
            (r"Scene: the cup is blue\.\nRobot:$", " hold the cup."),
            (r"Robot: hold the cup\.\nSuccess: yes\.\nRobot:$",
             " fill the cup with water from the faucet."),
            (r"Robot: fill the cup .*\nSuccess: yes\.\nRobot:$", " place the cup on the table."),
            *monologue_model().continuations,
        ]
    )  # fmt: skip
    method = registry.discover()["inner_monologue"](context(model))
    ep = world(remark)
    method.run(ep.view())
    assert ep.record.completed, method.monologue
    assert method.monologue[6:8] == ["Scene: the cup is blue.", "Robot: hold the cup."]
    assert "Success: no." not in method.monologue
    assert ep.record.changed_by_harmless == []


def test_inner_monologue_may_step_back_to_a_state_it_was_in() -> None:
    # A leaking cup seen once it is held: putting it down returns to the state after
    # finding it, which a rule against revisiting a state would forbid; the recovery
    # needs it.
    leaking = situation("the cup is leaking.", "fill_cup")
    model = ScriptedModel(
        continuations=[
            (r"Scene: the cup is leaking\.\nRobot:$", " put the cup down on the table."),
            (r"Robot: put the cup down on the table\.\nSuccess: yes\.\nRobot:$",
             " find the bowl."),
            (r"Robot: hold the cup\.\nSuccess: yes\.\nRobot:$",
             " fill the cup with water from the faucet."),
            *monologue_model().continuations,
        ]
    )  # fmt: skip
    method = registry.discover()["inner_monologue"](context(model))
    ep = world(leaking)
    method.run(ep.view())
    assert ep.record.completed, method.monologue
    assert "(put_down cup_1 table_1)" in ep.record.executed
    assert ep.record.executed[-1] == "(place_cup bowl_1 table_1)"


def test_inner_monologue_stops_a_loop_at_its_step_budget() -> None:
    # a model that likes holding and putting the cup down forever
    model = ScriptedModel(
        continuations=[
            (r"Robot: hold the cup\.\nSuccess: yes\.\nRobot:$", " put the cup down on the table."),
            (r"Robot:$", " hold the cup."),
        ]
    )
    method = registry.discover()["inner_monologue"](context(model))
    ep = world()
    method.run(ep.view())
    held = [s for s in ep.record.executed if s.startswith("(hold_cup cup_1")]
    assert len(held) > 1 and ep.record.gave_up == "out of steps", ep.record.executed
    # 3 * the closed-world plan's 6 steps + 6
    assert ep.record.attempts == 24


def test_inner_monologue_offers_stand_ins_only_once_something_went_wrong() -> None:
    # the model would rather use the bowl from the start
    model = ScriptedModel(continuations=[(r"Robot:$", " find the bowl.")])
    method = registry.discover()["inner_monologue"](context(model))
    ep = world()
    method.run(ep.view())
    assert not any("bowl" in s for s in ep.record.executed), ep.record.executed


def test_inner_monologue_refuses_a_model_without_log_probabilities() -> None:
    class NoLogprobs:
        name = "plain"

    ctx = context()
    ctx.model = NoLogprobs()  # type: ignore[assignment]
    with pytest.raises(CowpError, match="log-probabilities"):
        registry.discover()["inner_monologue"](ctx)


# ---- ProgPrompt ----------------------------------------------------------------------

PROGRAM = """    find_faucet('faucet_1')
    turnon_faucet('faucet_1')
    find_cup('cup_1')
    hold_cup('cup_1')
    fill_cup('cup_1', 'faucet_1')
    place_cup('cup_1', 'table_1')
    wash('cup_1')"""
REWRITTEN = """    assert('cup_1' is usable) else: find_cup('bowl_1')
    hold_cup('cup_1')
    fill_cup('cup_1', 'faucet_1')
    place_cup('cup_1', 'table_1')"""


def test_progprompt_rewrites_with_the_situation_and_asks_the_model_about_its_asserts() -> None:
    model = ScriptedModel(
        completions=[(r"# seen: the cup is dirty\.\n$", REWRITTEN), (r"\(\):\n$", PROGRAM)],
        yes_no=[(r"It has seen: the cup is dirty\. Can it use the cup \('cup_1'\)", False)],
    )
    method = registry.discover()["progprompt"](context(model))
    ep = world(DIRTY_CUP)
    method.run(ep.view())
    assert ep.record.completed, method.trace()
    prompts = model.questions("complete")
    assert len(prompts) == 2 and prompts[0].endswith(
        "def filling_a_cup_with_water_from_the_faucet():\n"
    )
    assert prompts[1].endswith(
        "    # done: find_faucet('faucet_1'), turnon_faucet('faucet_1'), find_cup('cup_1')\n"
        "    # seen: the cup is dirty.\n"
    )
    assert model.questions("yes_no"), "the assert was checked with the model"
    assert ep.record.executed[-3:] == [
        "(hold_cup bowl_1)", "(fill_cup bowl_1 faucet_1)", "(place_cup bowl_1 table_1)"
    ]  # fmt: skip


def test_progprompt_asks_nothing_about_an_assert_before_anything_was_seen() -> None:
    model = ScriptedModel(completions=[(".", REWRITTEN.replace("hold_cup", "find_cup", 1))])
    method = registry.discover()["progprompt"](context(model))
    method.run(world().view())
    assert model.questions("yes_no") == []


def test_progprompt_keeps_the_program_as_written_even_with_no_step() -> None:
    text = "    walk_to('kitchen')\n    pick_up(cup)"
    model = ScriptedModel(completions=[(".", text)])
    method = registry.discover()["progprompt"](context(model))
    ep = world()
    method.run(ep.view())
    assert ep.record.gave_up == "the program has no executable step"
    assert f"program 1 as written: {text!r}" in method.trace()
    assert "program 1: []" in method.trace()
    assert any("walk_to('kitchen')" in line and "no step" in line for line in method.trace())


def test_progprompt_parsing_keeps_only_present_objects_and_known_actions() -> None:
    parsed = parse_program(
        "find_cup('cup_1')\nfind_cup('mug_9')\nfly('cup_1')\n# note\n"
        "assert('cup_1' is usable) else: find_cup('cup_1')\n",
        {"find_cup"},
        {"cup_1"},
    )
    assert parsed.steps == [PlanStep("find_cup", ("cup_1",))]
    assert parsed.recoveries == {"cup_1": PlanStep("find_cup", ("cup_1",))}
    assert len(parsed.skipped) == 2


# ---- EK ------------------------------------------------------------------------------

ANSWERS = """raw prompt:is it suitable that a robot holds a cup if the cup is broken?
no, it is not suitable for a robot to hold a cup if the cup is broken
raw prompt:is it suitable that a robot holds a dish bowl?
yes
raw prompt:is it suitable that a robot fills a dish bowl with water from faucet?
yes
raw prompt:is it suitable that a robot holds a paper towel?
yes
raw prompt:is it suitable that a robot fills a paper towel with water from faucet?
no
raw prompt:is it suitable that a robot holds a wine glass?
yes
raw prompt:there are some objects, such as dish bowl, wine glass. which is the most suitable to replace a cup in the task of drinking water if the cup is broken?
a wine glass is the most suitable object to replace a cup
"""  # noqa: E501


def test_ek_reads_stand_ins_from_the_external_answers_and_maps_them_to_kinds() -> None:
    knowledge = parse_answers(ANSWERS)
    assert set(knowledge) == {"cup"}
    assert knowledge["cup"].chosen == {"wine glass": 1}
    assert dict(knowledge["cup"].all_yes) == {"dish bowl": 1, "wine glass": 1}
    kinds = {"cup", "glass", "bowl", "towel"}
    assert kind_of("dish bowl", kinds) == "bowl" and kind_of("dish", kinds) is None
    # chosen first, then every candidate GPT-3 said yes to for the whole role
    assert stand_ins(knowledge, "cup", kinds) == ["glass", "bowl"]


def test_ek_uses_its_knowledge_only_for_covered_kinds() -> None:
    outcomes = {}
    for seed in range(12):
        method = registry.discover()["ek"](context(seed=seed))
        ep = world(DIRTY_CUP)
        method.run(ep.view())
        outcomes["cup" in method.covered] = ep.record.completed
        if "cup" in method.covered:
            assert ep.record.executed[-1].endswith(" bowl_1 table_1)"), method.trace()
    assert outcomes == {True: True, False: False}


def test_ek_without_its_external_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CowpError, match="gpt3_answers"):
        registry.discover()["ek"](context(gpt3_answers=""))
    # the runner reads the file for EK, and names the folder it lacks
    with pytest.raises(CowpError, match=r"no .*gpt3_answers/experience_task_4.txt"):
        outside_knowledge(registry.discover()["ek"], get_task("fill_cup"), tmp_path)
    assert outside_knowledge(registry.discover()["cw"], get_task("fill_cup"), tmp_path) == {}


def test_ek_neither_imports_nor_reads_the_judges_annotations() -> None:
    source = Path(registry.__file__).with_name("ek.py").read_text()
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not any("annotations" in str(m) or "simulator" in str(m) for m in imported), imported
    assert "benchmarks" not in source and ".yaml" not in source


# ---- COWP (kept here with the other methods) -------------------------------------------


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
    ep = world(DIRTY_CUP)
    registry.discover()["cowp"](ctx).run(ep.view())
    assert ep.record.completed, ep.record
    assert ctx.model is not None and ctx.model.usage.calls == model.usage.calls > 0


def test_a_method_with_a_model_runs_behind_the_boundary_and_its_usage_is_counted() -> None:
    from bench_fixtures import fill_cup

    from cowp_ros.bench.runner import Trial, run_one

    spec, task, annotation = fill_cup()
    trial = Trial("fill_cup", 0, 1, task, (), (DIRTY_CUP,))
    model = cowp_model()
    record = run_one(
        registry.discover()["cowp"], spec, trial, annotation, make_planner("pyperplan"), model
    )
    assert record["completed"] and not record["error"], record["error"]
    assert record["usage"]["calls"] == model.usage.calls > 0
    assert any("bowl" in line for line in record["trace"])
