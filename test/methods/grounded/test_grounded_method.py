"""The grounded method: grounding, one decision per situation, frugal acquirer, tidy plans."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from cowp_ros.cowp.loop import CowpSettings, Phase
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Example, YesNo
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.grounded.frugal_acquirer import FrugalAcquirer
from cowp_ros.methods.grounded.grounding import GroundedFacts, fact_of, ground
from cowp_ros.methods.grounded.method import EMBEDDER
from cowp_ros.methods.grounded.questions import EXAMPLES, RESTATED_EXAMPLES, examples_for
from cowp_ros.methods.grounded.settings import GroundedSettings
from cowp_ros.methods.grounded.situation_monitor import (
    NEED,
    STATE,
    TASK_STATE,
    USE,
    GroundedMonitor,
    RoleNeeds,
    Thresholds,
    is_release,
)
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.planning.tidy import TidyPlanner, replay, tidy
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases, noun, object_type

FILL_PLAN = [
    PlanStep("find_faucet", ("faucet_1",)),
    PlanStep("turnon_faucet", ("faucet_1",)),
    PlanStep("find_cup", ("cup_1",)),
    PlanStep("hold_cup", ("cup_1",)),
    PlanStep("fill_cup", ("cup_1", "faucet_1")),
    PlanStep("place_cup", ("cup_1", "table_1")),
]


@pytest.fixture
def fill() -> tuple[TaskSpec, PlanningTask]:
    spec = get_task("fill_cup")
    return spec, spec.load()


def used(steps: Sequence[PlanStep]) -> list[str]:
    return list(dict.fromkeys(a for s in steps for a in s.args))


# ---- grounding ----------------------------------------------------------------------


def test_cutlery_in_the_cup_is_about_the_cup_the_plan_uses(fill) -> None:
    _, task = fill
    g = ground(Situation("a fork, a knife and a spoon are inside the cup"), task, used(FILL_PLAN))
    assert (g.subject, g.how, g.in_plan) == ("cup_1", "named", True)
    assert g.named_kinds[:2] == ("fork", "knife")


def test_the_second_cup_is_the_one_the_plan_uses(fill) -> None:
    _, task = fill
    task = edits.add_object(task, "cup_2", "cup")
    g = ground(Situation("the cup is dirty"), task, ["faucet_1", "cup_2"])
    assert g.subject == "cup_2"


def test_a_present_object_the_plan_does_not_use_is_not_in_plan(fill) -> None:
    _, task = fill
    g = ground(Situation("a chair was moved in the living room"), task, used(FILL_PLAN))
    assert (g.subject, g.in_plan) == ("chair_1", False)


def test_a_sentence_naming_no_object_present_is_about_the_world(fill) -> None:
    _, task = fill
    g = ground(Situation("there is a power outage"), task, used(FILL_PLAN))
    assert (g.subject, g.how) == (None, "world")
    elsewhere = ground(Situation("the dishwasher in the next room is running"), task, ["cup_1"])
    assert (elsewhere.subject, elsewhere.in_plan) == ("room_1", False)


def test_the_source_object_wins_over_the_words(fill) -> None:
    _, task = fill
    seen = Situation("a fork is inside", object="cup_1", source="detector")
    assert ground(seen, task, used(FILL_PLAN)).how == "source"


def test_facts_come_from_the_grounding_without_a_model(fill) -> None:
    _, task = fill
    seen = Situation("the cup is broken")
    fact = fact_of(seen, ground(seen, task, ["cup_1"]), task)
    assert str(fact.atom) == "(is_broken cup_1)" and fact.subject == "cup_1"
    world = GroundedFacts().generate(Situation("there is a power outage"), task, [])
    assert world.subject is None and world.atom.args == ()


# ---- the monitor ----------------------------------------------------------------------


def monitor_for(model: ScriptedModel) -> GroundedMonitor:
    return GroundedMonitor(model, "filling a cup with water", Thresholds(use=0.0, world=2.0))


def test_a_situation_about_no_plan_object_costs_no_question(fill) -> None:
    _, task = fill
    model = ScriptedModel(default_yes_no=False)
    check = monitor_for(model).check(FILL_PLAN, Situation("the sofa is red"), task, used(FILL_PLAN))
    assert check.blocked is None and model.usage.calls == 0


def test_one_question_blocks_the_first_step_using_the_object(fill) -> None:
    _, task = fill
    model = ScriptedModel(yes_no=[(r"The cup is dirty\. Can the robot still use the cup", False)])
    monitor = monitor_for(model)
    check = monitor.check(FILL_PLAN, Situation("the cup is dirty"), task, used(FILL_PLAN))
    assert check.blocked == FILL_PLAN[2]
    assert check.fact is not None and str(check.fact.atom) == "(is_dirty cup_1)"
    again = monitor.check(FILL_PLAN[3:], Situation("the cup is dirty"), task, used(FILL_PLAN))
    assert again.blocked == FILL_PLAN[3] and again.verdicts == ()
    assert model.usage.calls == 1
    assert [d.by for d in monitor.decisions] == ["question"]


def test_a_world_situation_needs_a_sure_model(fill) -> None:
    _, task = fill
    unsure = ScriptedModel(yes_no=[(r"go on with", 0.3)])
    assert monitor_for(unsure).check(FILL_PLAN, Situation("it rains"), task).blocked is None
    sure = ScriptedModel(yes_no=[(r"go on with", 0.01)])
    check = monitor_for(sure).check(FILL_PLAN, Situation("there is a power outage"), task)
    assert check.blocked == FILL_PLAN[0] and check.fact is not None
    assert check.fact.subject is None


def test_a_release_step_does_not_use_what_it_lets_go(fill) -> None:
    _, task = fill
    assert is_release(task, "put_down") and not is_release(task, "place_cup")
    model = ScriptedModel(default_yes_no=False)
    steps = [PlanStep("put_down", ("cup_1", "table_1")), *FILL_PLAN[2:]]
    check = monitor_for(model).check(steps, Situation("the cup is broken"), task, used(steps))
    assert check.blocked == steps[1]


# ---- the frugal acquirer --------------------------------------------------------------


class KindEmbedder:
    """Vectors by hand: a mug is close to a cup, a plate less, a chair far."""

    name = "by-hand"
    VECTORS: ClassVar[dict[str, list[float]]] = {
        "a cup": [1.0, 0.0, 0.0],
        "a mug": [0.9, 0.1, 0.0],
        "a plate": [0.5, 0.5, 0.0],
        "a bowl": [0.7, 0.3, 0.0],
        "a chair": [0.0, 0.0, 1.0],
    }

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.array([self.VECTORS.get(t, [0.0, 1.0, 0.0]) for t in texts], dtype=float)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_closest_kinds_are_tried_first_and_the_far_ones_never(fill) -> None:
    spec, task = fill
    acquirer = FrugalAcquirer(
        KnowledgeAcquirer(ScriptedModel(), ActionPhrases(spec.phrases)),
        embedder=KindEmbedder(),
        max_candidates=2,
        min_similarity=0.2,
    )
    ranked = acquirer.rank(
        task, "cup", [("bowl", "bowl_1"), ("chair", "chair_1"), ("mug", "mug_1")], ""
    )
    assert [kind for kind, _ in ranked] == ["mug", "bowl"]


def test_a_stand_in_is_asked_per_action_only_after_its_role_question(fill) -> None:
    spec, task = fill
    model = ScriptedModel(
        yes_no=[
            (r"Can a plate be used instead", 0.95),
            (r"fill a plate with water", False),
            (r"Can a bowl be used instead", 0.5),
        ]
    )
    inner = KnowledgeAcquirer(model, ActionPhrases(spec.phrases), role_threshold=0.9)
    acquirer = FrugalAcquirer(inner, embedder=None)
    actions = ["hold_cup", "fill_cup", "place_cup", "find_cup"]
    plate = acquirer.assess(task, "cup", actions, "plate", "plate_1", spec.description)
    assert not plate.accepted and len(plate.questions) == 3  # role, hold, fill: "no"
    bowl = acquirer.assess(task, "cup", actions, "bowl", "bowl_1", spec.description)
    assert not bowl.accepted and len(bowl.questions) == 1  # the role question only
    assert acquirer.enough([plate]) is True


# ---- the whole loop -------------------------------------------------------------------


def test_a_dirty_cup_is_replaced_by_the_second_cup_with_one_question(fill) -> None:
    spec, _ = fill
    task = edits.add_object(spec.load(), "cup_2", "cup")
    model = ScriptedModel(
        yes_no=[(r"The cup is dirty\. Can the robot still use", False)], default_yes_no=True
    )
    loop = build_loop("grounded", spec, model, problem=task, options={EMBEDDER: KindEmbedder()})
    loop.plan()
    # whichever of the two equal cups the planner took first is the dirty one
    (first,) = {s.args[0] for s in loop.remaining_steps if s.action == "find_cup"}
    while (step := loop.next_step()) is not None and step.action != "find_cup":
        loop.step_done(True)
    loop.observe("the cup is dirty")
    assert all(first not in s.args for s in loop.remaining_steps)
    assert any(s.action == "find_cup" for s in loop.remaining_steps)
    while loop.next_step() is not None:
        loop.step_done(True)
    assert loop.phase is Phase.COMPLETED and model.usage.calls == 1


def test_a_failed_step_blames_the_situation_judged_harmless(fill) -> None:
    spec, _ = fill
    task = edits.add_object(spec.load(), "cup_2", "cup")
    # "the cup is cracked" judged harmless: usable, and not dirty.
    model = ScriptedModel(yes_no=[(r"dirty\?$", False)], default_yes_no=True)
    loop = build_loop("grounded", spec, model, problem=task, options={EMBEDDER: KindEmbedder()})
    loop.plan()
    while (step := loop.next_step()) is not None and step.action != "hold_cup":
        loop.step_done(True)
    held = loop.next_step()
    assert held is not None
    loop.observe("the cup is cracked")
    assert loop.next_step() == held
    loop.step_done(False)
    assert all(held.args[0] not in s.args for s in loop.remaining_steps if s.action != "put_down")
    assert any("failed after it" in e.text for e in loop.report.events)


def test_settings_come_per_model_with_a_default(tmp_path: Path) -> None:
    path = tmp_path / "grounded.yaml"
    path.write_text("models:\n  default: {use_threshold: 0.5}\n  m: {use_threshold: 1.5}\n")
    assert GroundedSettings.for_model("m", path).use_threshold == 1.5
    assert GroundedSettings.for_model("other", path).use_threshold == 0.5
    path.write_text("models:\n  default: {use_treshold: 0.5}\n")
    with pytest.raises(CowpError, match="unknown setting 'use_treshold'"):
        GroundedSettings.for_model("m", path)


def test_the_shipped_settings_load() -> None:
    assert GroundedSettings.for_model("qwen2.5-coder-1.5b").role_threshold > 0.5


# ---- tidy plans -----------------------------------------------------------------------


def test_a_walk_is_done_when_it_is_needed_not_first() -> None:
    spec = get_task("serve_water")
    task = spec.load()
    wandering = [
        PlanStep("walk_to", ("table_1",)),
        PlanStep("find_cup", ("cup_1",)),
        PlanStep("grasp_cup", ("cup_1",)),
        PlanStep("walk_to", ("faucet_1",)),
        PlanStep("fill_water", ("cup_1", "faucet_1")),
        PlanStep("walk_to", ("table_1",)),
        PlanStep("deliver_water", ("cup_1", "table_1")),
    ]
    assert replay(task, wandering)
    tidied = tidy(task, wandering)
    assert [str(s) for s in tidied] == [
        "(find_cup cup_1)",
        "(grasp_cup cup_1)",
        "(walk_to faucet_1)",
        "(fill_water cup_1 faucet_1)",
        "(walk_to table_1)",
        "(deliver_water cup_1 table_1)",
    ]
    assert replay(task, tidied)


def test_an_invalid_plan_is_left_as_it_is() -> None:
    task = get_task("serve_water").load()
    bad = [PlanStep("deliver_water", ("cup_1", "table_1"))]
    assert not replay(task, bad) and tidy(task, bad) == bad


def test_the_tidy_planner_gives_valid_plans() -> None:
    task = get_task("serve_water").load()
    result = TidyPlanner(make_planner("pyperplan")).solve(task, 60.0)
    assert result.found and replay(task, result.steps)
    walks = [i for i, s in enumerate(result.steps) if s.action == "walk_to"]
    assert result.steps[walks[0]].args == ("faucet_1",)


def test_a_decision_names_the_step_it_blocks_its_fact_and_why_with_one_question(fill) -> None:
    _, task = fill
    model = ScriptedModel(yes_no=[(r"The cup is dirty\. Can the robot still use", False)])
    monitor = GroundedMonitor(model, "filling a cup", Thresholds())
    check = monitor.check(FILL_PLAN, Situation("the cup is dirty"), task, used(FILL_PLAN))
    assert check.blocked == FILL_PLAN[2] and model.usage.calls == 1
    assert [v.step for v in check.verdicts] == [FILL_PLAN[2]]  # no verdicts made up
    assert check.fact is not None and check.fact.subject == "cup_1"
    assert check.reason.startswith(
        "decided: the cup is dirty: blocks after 1 question: it can no longer be used"
    )
    again = monitor.check(FILL_PLAN[1:], Situation("the cup is dirty"), task, used(FILL_PLAN))
    assert again.blocked == FILL_PLAN[2] and again.verdicts == ()
    assert model.usage.calls == 1


# ---- the object's functions: use, dirt, the role's clean need ---------------------------


TASK_CALLS_THE_CUP_DIRTY = r"^Task: [^.]*\. Is the cup dirty\?$"
"""The task-state question: only the task's words before "Is the cup dirty?"."""


def test_a_usable_but_dirty_object_blocks_where_the_task_needs_it_clean(fill) -> None:
    _, task = fill
    model = ScriptedModel(
        yes_no=[
            (r"use the cup", True),
            (TASK_CALLS_THE_CUP_DIRTY, False),
            (r"Is the cup dirty\?", True),
            (r"must the cup", True),
        ]
    )
    monitor = monitor_for(model)
    check = monitor.check(FILL_PLAN, Situation("the cup has coffee stains"), task, used(FILL_PLAN))
    assert check.blocked == FILL_PLAN[2]
    assert [v.variant for v in check.verdicts] == [USE, STATE, TASK_STATE, NEED]
    decision = monitor.decisions[-1]
    assert decision.because is not None and decision.because.kind == NEED
    assert "dirty and the task needs it clean" in check.reason
    assert check.verdicts[2].judgement == "the task does not call the cup dirty"
    # The role's need is asked once: a second dirt situation costs two questions.
    monitor.check(FILL_PLAN, Situation("the cup has mould in it"), task, used(FILL_PLAN))
    assert model.usage.calls == 6


def test_dirt_the_tasks_own_words_expect_is_harmless(fill) -> None:
    """ "Putting a dirty plate into the sink": the plate's dirt is no news, and its
    clean need is not asked."""
    _, task = fill
    model = ScriptedModel(yes_no=[(r"use the cup", True), (r"dirty\?", True), (r"must", True)])
    check = monitor_for(model).check(
        FILL_PLAN, Situation("the cup has coffee stains"), task, used(FILL_PLAN)
    )
    assert check.blocked is None
    assert [v.variant for v in check.verdicts] == [USE, STATE, TASK_STATE]
    assert [v.suitable for v in check.verdicts] == [True, False, True]
    assert check.verdicts[-1].judgement == "the task calls the cup dirty"


def test_dirt_on_an_object_the_task_does_not_need_clean_is_harmless(fill) -> None:
    _, task = fill
    model = ScriptedModel(
        yes_no=[(TASK_CALLS_THE_CUP_DIRTY, False), (r"dirty\?", True), (r"must the cup", False)]
    )
    check = monitor_for(model).check(
        FILL_PLAN, Situation("the cup is muddy"), task, used(FILL_PLAN)
    )
    assert check.blocked is None
    assert [v.variant for v in check.verdicts] == [USE, STATE, TASK_STATE, NEED]
    assert [v.suitable for v in check.verdicts] == [True, False, False, True]


def test_a_cosmetic_remark_costs_two_questions_and_keeps_the_plan(fill) -> None:
    _, task = fill
    model = ScriptedModel(yes_no=[(r"dirty\?", False)], default_yes_no=True)
    check = monitor_for(model).check(
        FILL_PLAN, Situation("the cup has a flower pattern"), task, used(FILL_PLAN)
    )
    assert check.blocked is None and model.usage.calls == 2


NEEDS = [
    (TASK_CALLS_THE_CUP_DIRTY, False),
    (r"^Task: [^.]*\. Is the (faucet|table) dirty\?$", False),
    (r"must the (cup|faucet) be clean", True),
    (r"must the table be clean", False),
]
"""Answers for fill_cup's roles: the task calls none dirty; the cup and the faucet must be
clean, the table need not be."""


def test_the_plan_roles_clean_needs_are_asked_when_the_plan_is_made(fill) -> None:
    _, task = fill
    model = ScriptedModel(yes_no=[*NEEDS, (r"dirty\?$", True)], default_yes_no=True)
    monitor = monitor_for(model)
    prepared = monitor.prepare(FILL_PLAN, task)
    # Grouped by form, each role in plan order: the task's own words about its dirt,
    # then the need of each role they do not call dirty.
    assert [(v.step.action, v.variant) for v in prepared] == [
        ("find_faucet", TASK_STATE),
        ("find_cup", TASK_STATE),
        ("place_cup", TASK_STATE),
        ("find_faucet", NEED),
        ("find_cup", NEED),
        ("place_cup", NEED),
    ]
    assert all(v.situation == "" for v in prepared) and model.usage.calls == 6
    assert monitor.prepare(FILL_PLAN, task) == ()  # known roles are not asked again
    # A dirty cup is then decided in two questions: its use, and its dirt.
    check = monitor.check(FILL_PLAN, Situation("the cup has mould in it"), task, used(FILL_PLAN))
    assert check.blocked == FILL_PLAN[2] and [v.variant for v in check.verdicts] == [USE, STATE]
    assert monitor.decisions[-1].because is not None
    assert monitor.decisions[-1].because.kind == NEED
    # A remark about the table, which dirt cannot block, in one.
    check = monitor.check(FILL_PLAN, Situation("the table is sticky"), task, used(FILL_PLAN))
    assert check.blocked is None and [v.variant for v in check.verdicts] == [USE]
    assert model.usage.calls == 6 + 2 + 1


def test_role_needs_kept_for_another_monitor_hold_only_for_the_same_task_words(fill) -> None:
    _, task = fill
    model = ScriptedModel(yes_no=[*NEEDS, (r"dirty\?$", True)], default_yes_no=True)
    kept: RoleNeeds = {}
    first = GroundedMonitor(model, "filling a cup with water", Thresholds(use=0.0), needs=kept)
    assert len(first.prepare(FILL_PLAN, task)) == 6
    # The next request's monitor (the commonsense node builds one per request) asks none.
    again = GroundedMonitor(model, "filling a cup with water", Thresholds(use=0.0), needs=kept)
    assert again.prepare(FILL_PLAN, task) == () and model.usage.calls == 6
    check = again.check(FILL_PLAN, Situation("the table is sticky"), task, used(FILL_PLAN))
    assert [v.variant for v in check.verdicts] == [USE] and model.usage.calls == 7
    # Other words for the task may need other things: asked anew.
    other = GroundedMonitor(model, "wiping the table", Thresholds(use=0.0), needs=kept)
    assert [v.variant for v in other.prepare(FILL_PLAN, task)][:3] == [TASK_STATE] * 3


def test_kept_role_needs_forget_the_oldest_past_their_bound(
    fill, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cowp_ros.methods.grounded import situation_monitor

    _, task = fill
    monkeypatch.setattr(situation_monitor, "MAX_KEPT_ROLES", 2)
    kept: RoleNeeds = {}
    model = ScriptedModel(yes_no=NEEDS, default_yes_no=True)
    monitor = GroundedMonitor(model, "filling", needs=kept)
    first = monitor.prepare(FILL_PLAN, task)
    assert len(first) == 6 and len(kept) == 2  # three roles asked, two kept
    role = noun(object_type(first[0].step.args[0], task))
    again = monitor.prepare(FILL_PLAN, task)  # the first role forgotten, asked again
    assert {noun(object_type(v.step.args[0], task)) for v in again} == {role}
    assert len(again) == 2 and len(kept) == 2


def test_a_role_the_tasks_words_call_dirty_is_prepared_without_its_need(fill) -> None:
    _, task = fill
    model = ScriptedModel(
        yes_no=[(TASK_CALLS_THE_CUP_DIRTY, True), *NEEDS[1:], (r"dirty\?$", True)],
        default_yes_no=True,
    )
    monitor = monitor_for(model)
    prepared = monitor.prepare(FILL_PLAN, task)
    assert [v.variant for v in prepared] == [TASK_STATE] * 3 + [NEED] * 2
    assert not any("must the cup" in v.question for v in prepared)
    # Dirt on the cup is then no news, decided by its use question alone.
    check = monitor.check(FILL_PLAN, Situation("the cup has mould in it"), task, used(FILL_PLAN))
    assert check.blocked is None and [v.variant for v in check.verdicts] == [USE]


def test_the_loop_prepares_its_monitor_only_where_its_settings_say_so(fill) -> None:
    spec, task = fill
    for prepare in (False, True):
        model = ScriptedModel(yes_no=[*NEEDS, (r"dirty\?$", True)], default_yes_no=True)
        loop = build_loop(
            "grounded",
            spec,
            model,
            problem=task,
            options={EMBEDDER: KindEmbedder()},
            settings=CowpSettings(prepare_monitor=prepare),
        )
        loop.plan()
        asked = loop.report.of_kind("monitor")
        assert len(asked) == model.usage.calls == (6 if prepare else 0)
        assert all(e.data["situation"] == "" for e in asked)


class PrefixSpy(ScriptedModel):
    """Records the examples each question is asked after."""

    def __init__(self) -> None:
        super().__init__(
            yes_no=[(TASK_CALLS_THE_CUP_DIRTY, False), (r"dirty\?", True)], default_yes_no=True
        )
        self.prefixes: list[tuple[Example, ...]] = []

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        self.prefixes.append(tuple(examples))
        return super().ask_yes_no(question, system=system, examples=examples)


def test_every_question_shares_one_prefix_for_the_servers_prompt_cache(fill) -> None:
    _, task = fill
    model = PrefixSpy()
    monitor = monitor_for(model)
    monitor.check(FILL_PLAN, Situation("the cup is sticky"), task, used(FILL_PLAN))
    monitor.check(FILL_PLAN, Situation("there is a power outage"), task, used(FILL_PLAN))
    assert len(model.prefixes) == 5  # use, dirt, the task's own words, need; the task question
    assert all(prefix == EXAMPLES for prefix in model.prefixes)


def test_a_tidied_plan_that_still_goes_back_is_not_called_tidied() -> None:
    from cowp_ros.planning import make_planner
    from cowp_ros.planning.tidy import TidyPlanner, returns_to

    task = get_task("serve_water").load()
    route = [
        PlanStep("find_cup", ("cup_1",)),
        PlanStep("grasp_cup", ("cup_1",)),
        PlanStep("walk_to", ("faucet_1",)),
        PlanStep("fill_water", ("cup_1", "faucet_1")),
        PlanStep("walk_to", ("table_1",)),
        PlanStep("deliver_water", ("cup_1", "table_1")),
    ]
    assert returns_to(task, route) == []
    there_and_back = [*route[:4], PlanStep("walk_to", ("table_1",)), *route[2:]]
    assert returns_to(task, there_and_back) == ["faucet_1", "table_1"]
    # set_table: the walk to the table waits until the plate is out of the cupboard, but
    # the plate and the fork still each go from the cupboard to the table
    set_table = get_task("set_table").load()
    result = TidyPlanner(make_planner("pyperplan")).solve(set_table, 60)
    steps = [str(s) for s in result.steps]
    assert steps.index("(walk table_1)") > steps.index("(takeout_plate plate_1 cupboard_1)")
    assert result.found and "(tidied)" not in result.detail
    assert "it still goes back to cupboard_1, table_1" in result.detail
    assert returns_to(set_table, result.steps) == ["cupboard_1", "table_1"]
    # plate_to_sink: the walk to the sink waits until the plate is in hand: no way back
    plate_to_sink = get_task("plate_to_sink").load()
    result = TidyPlanner(make_planner("pyperplan")).solve(plate_to_sink, 60)
    assert returns_to(plate_to_sink, result.steps) == [] and "(tidied)" in result.detail


# ---- restating a situation first --------------------------------------------------------


def restating_monitor(model: ScriptedModel) -> GroundedMonitor:
    return GroundedMonitor(
        model,
        "filling a cup with water",
        Thresholds(use=0.0, world=2.0),
        examples=examples_for(True),
        restate=True,
    )


def test_a_restated_situation_is_asked_about_in_its_plain_form(fill) -> None:
    _, task = fill
    model = ScriptedModel(
        completions=[
            (r"unwashed\. Say it plainly: what is the cup like now\?", "The cup is dirty.")
        ],
        yes_no=[(r"unwashed: the cup is dirty\. Can the robot still use the cup", False)],
    )
    monitor = restating_monitor(model)
    situation = Situation("someone left the cup unwashed")
    check = monitor.check(FILL_PLAN, situation, task, used(FILL_PLAN))
    assert check.blocked == FILL_PLAN[2]
    decision = monitor.decisions[-1]
    assert decision.restated == "The cup is dirty"
    assert "(read as: The cup is dirty)" in decision.describe()
    assert [kind for kind, _, _ in model.log] == ["complete", "yes_no"]
    # the fact keeps the sentence's own words, not the restatement's
    assert check.fact is not None and "unwashed" in str(check.fact.atom)


def test_a_restatement_about_something_else_or_too_long_is_dropped(fill) -> None:
    _, task = fill
    for reply in ("I cannot tell.", "The cup " + "is very " * 8 + "old."):
        model = ScriptedModel(completions=[(r"Say it plainly", reply)], default_yes_no=True)
        monitor = restating_monitor(model)
        monitor.check(FILL_PLAN, Situation("the cup is blue"), task, used(FILL_PLAN))
        assert monitor.decisions[-1].restated == ""
        assert model.questions()[0] == (
            "Task: filling a cup with water. The cup is blue. "
            "Can the robot still use the cup for the task?"
        )


def test_without_restating_no_restatement_is_asked(fill) -> None:
    _, task = fill
    model = ScriptedModel(default_yes_no=True)
    monitor_for(model).check(FILL_PLAN, Situation("the cup is blue"), task, used(FILL_PLAN))
    assert "complete" not in {kind for kind, _, _ in model.log}
    assert monitor_for(model).restate is False


def test_a_restating_monitor_shares_one_prefix_with_its_restatements(fill) -> None:
    _, task = fill

    class CompletionSpy(PrefixSpy):
        def complete(self, prompt: str, *, system=None, examples=(), max_tokens: int = 64) -> str:
            self.prefixes.append(tuple(examples))
            return "The cup is sticky."

    model = CompletionSpy()
    restating_monitor(model).check(FILL_PLAN, Situation("the cup is sticky"), task, used(FILL_PLAN))
    assert len(model.prefixes) >= 2
    assert all(prefix == RESTATED_EXAMPLES for prefix in model.prefixes)
    assert RESTATED_EXAMPLES[: len(EXAMPLES)] == EXAMPLES


def test_after_the_plan_a_restating_monitor_reads_its_own_prefix_again(fill) -> None:
    # The prefix read after the roles' questions is the one the situation's questions
    # will be asked after; reading the shorter one left the restatement's examples out
    # of the server's prompt cache, and every first situation paid for them again.
    _, task = fill

    class WarmSpy(PrefixSpy):
        def __init__(self) -> None:
            super().__init__()
            self.warmed: list[tuple[Example, ...]] = []

        def warm(self, examples=(), question: str = "") -> float:
            self.warmed.append(tuple(examples))
            return 0.0

    for monitor_of, examples in ((restating_monitor, RESTATED_EXAMPLES), (monitor_for, EXAMPLES)):
        model = WarmSpy()
        assert monitor_of(model).prepare(FILL_PLAN, task)
        assert model.warmed == [examples]
        assert set(model.prefixes) == {examples}


def reading_both_monitor(model: ScriptedModel) -> GroundedMonitor:
    return GroundedMonitor(
        model,
        "filling a cup with water",
        Thresholds(use=0.0, world=2.0, dirty=1.0, need=0.0),
        examples=examples_for(True),
        restate=True,
        read_both=True,
    )


def test_reading_both_decides_on_the_mean_of_the_sentence_and_its_restatement(fill) -> None:
    _, task = fill
    model = ScriptedModel(
        completions=[(r"Say it plainly", "The cup is full.")],
        yes_no=[
            # the sentence alone: usable (log-odds of "no" -1.39); with its restatement:
            # not (+2.20); the mean (+0.41) is over the use threshold
            (r"spoons\. Can the robot still use the cup", 0.8),
            (r"spoons: the cup is full\. Can the robot still use the cup", 0.1),
        ],
    )
    monitor = reading_both_monitor(model)
    situation = Situation("the cup holds two spoons")
    check = monitor.check(FILL_PLAN, situation, task, used(FILL_PLAN))
    assert check.blocked == FILL_PLAN[2]
    decision = monitor.decisions[-1]
    assert decision.restated == "The cup is full"
    assert decision.score == pytest.approx((np.log(0.2 / 0.8) + np.log(0.9 / 0.1)) / 2)
    assert decision.answer is not None and decision.answer.p_yes == pytest.approx(0.4, abs=1e-9)
    assert [kind for kind, _, _ in model.log] == ["complete", "yes_no", "yes_no"]


def test_reading_both_asks_once_where_the_restatement_is_dropped(fill) -> None:
    _, task = fill
    model = ScriptedModel(completions=[(r"Say it plainly", "I cannot tell.")], yes_no=[])
    monitor = reading_both_monitor(model)
    monitor.check(FILL_PLAN, Situation("the cup is blue"), task, used(FILL_PLAN))
    asked = monitor.decisions[-1].asked
    assert [a.question.count("Can the robot still use") for a in asked[:1]] == [1]
    assert " | " not in asked[0].question


def test_reading_both_without_restating_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "grounded.yaml"
    path.write_text("models:\n  m: {read_both: true}\n  default: {}\n")
    with pytest.raises(CowpError, match="read_both reads the situation's restatement") as err:
        GroundedSettings.for_model("m", path)
    assert "restate: true" in str(err.value.hint)
    path.write_text("models:\n  m: {restate: true, read_both: true}\n  default: {}\n")
    assert GroundedSettings.for_model("m", path).read_both is True


def test_restate_is_a_switch_in_the_settings(tmp_path: Path) -> None:
    path = tmp_path / "grounded.yaml"
    path.write_text("models:\n  m: {restate: true}\n  default: {}\n")
    assert GroundedSettings.for_model("m", path).restate is True
    assert GroundedSettings.for_model("other", path).restate is False
    path.write_text("models:\n  default: {restate: 1}\n")
    with pytest.raises(CowpError, match="restate must be true or false"):
        GroundedSettings.for_model("m", path)
