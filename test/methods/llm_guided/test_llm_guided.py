"""LLM-guided search: only applicable actions, invalid proposals refused, plans verified."""

from __future__ import annotations

import pytest

from cowp_ros.cli import main
from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.llm_guided.search import (
    ground_actions,
    guide_prompt,
    make_llm_guided_planner,
    parse_proposals,
    verify_plan,
)
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import Atom, PlanningTask, edits
from cowp_ros.planning import PlanStatus, PlanStep, make_planner
from cowp_ros.tasks import get_task


@pytest.fixture(scope="module")
def battery() -> PlanningTask:
    return get_task("battery_disassembly").load()


@pytest.fixture(scope="module")
def one_pack() -> PlanningTask:
    """The task's own 13 objects: small enough to search with any ordering in a second."""
    return get_task("battery_disassembly").build_problem(13)


def _applicable(task: PlanningTask) -> list:
    return [a for a in ground_actions(task) if a.applicable(task.init_atoms)]


def test_only_the_two_tools_on_the_rack_can_be_taken_first(battery: PlanningTask) -> None:
    steps = {str(a.step) for a in _applicable(battery)}
    assert steps == {"(take_tool screwdriver_1 rack_1)", "(take_tool wrench_1 rack_1)"}
    lifted = {str(a.step) for a in ground_actions(battery) if a.step.action == "lift_cover"}
    # Static facts prune the groundings: each cover with its own two bolts only.
    assert lifted == {
        "(lift_cover cover_1 bolt_1 bolt_2)",
        "(lift_cover cover_2 bolt_3 bolt_4)",
        "(lift_cover cover_3 bolt_5 bolt_6)",
    }


def test_invalid_proposals_are_refused_with_reasons(battery: PlanningTask) -> None:
    options = _applicable(battery)
    by_step = {a.step: a for a in ground_actions(battery)}
    answer = (
        "7, (lift_cover cover_1 bolt_1 bolt_2), (rm -rf /), (take_tool wrench_1 rack_1), 0, 1, 1"
    )
    assert str(options[0].step) == "(take_tool screwdriver_1 rack_1)"
    accepted, refused = parse_proposals(answer, options, battery.init_atoms, by_step, 3)
    assert [str(a.step) for a in accepted] == [
        "(take_tool wrench_1 rack_1)",
        "(take_tool screwdriver_1 rack_1)",
    ]
    reasons = [r.reason for r in refused]
    assert reasons[0].startswith("there is no option 7")
    assert "preconditions do not hold" in reasons[1] and "(bolt_out bolt_1)" in reasons[1]
    assert "not a ground action" in reasons[2]
    assert reasons[3].startswith("there is no option 0")


class OracleModel(ScriptedModel):
    """Answers with the option number of the next step of a known plan (else "1")."""

    def __init__(self, plan: list[PlanStep]) -> None:
        super().__init__(name="oracle")
        self.plan = [str(s) for s in plan]

    def complete(self, prompt: str, **kwargs: object) -> str:
        self.usage.calls += 1
        done = prompt.split("Steps done so far: ")[1].split("\n")[0]
        position = 0 if done == "nothing yet" else done.count("(")
        wanted = self.plan[position] if position < len(self.plan) else ""
        for line in prompt.split("Possible next actions:\n")[1].splitlines():
            number, _, step = line.partition(". ")
            if step == wanted:
                return number
        return "1"


def test_the_models_order_steers_the_search(one_pack: PlanningTask) -> None:
    reference = make_planner("pyperplan").solve(one_pack, 60).steps
    oracle = make_llm_guided_planner(OracleModel(list(reference)), beam=1).solve(one_pack, 60)
    contrary = make_llm_guided_planner(ScriptedModel(completions=[(".", "2")]), beam=1)
    wandering = contrary.solve(one_pack, 60)
    assert oracle.steps == reference  # followed the model's picks exactly
    assert oracle.extra["expanded"] == len(reference)  # no node off the path
    assert wandering.found and wandering.extra["expanded"] > oracle.extra["expanded"]
    for result in (oracle, wandering):
        assert verify_plan(one_pack, result.steps) == []
        assert result.planner == "llm_guided"


def test_a_model_that_only_proposes_garbage_still_yields_a_valid_plan(one_pack) -> None:
    battery = one_pack
    model = ScriptedModel(completions=[(".", "(unscrew_bolt bolt_9 wrench_1) 99 (open_pack)")])
    planner = make_llm_guided_planner(model, beam=2)
    result = planner.solve(battery, 60)
    assert result.found
    assert verify_plan(battery, result.steps) == []
    assert result.extra["refused_total"] > 0
    assert result.extra["unranked_fallbacks"] == result.extra["llm_calls"]
    assert "(unscrew_bolt bolt_9 wrench_1)" not in [str(s) for s in result.steps]


def test_verify_plan_catches_bad_plans(battery: PlanningTask) -> None:
    good = make_planner("pyperplan").solve(battery, 60).steps
    assert verify_plan(battery, good) == []
    swapped = [good[1], good[0], *good[2:]]
    assert "must be true" in verify_plan(battery, swapped)[0]
    assert "does not hold at the end" in verify_plan(battery, good[:-1])[0]
    assert "no action" in verify_plan(battery, [PlanStep("explode", ())])[0]
    assert "unknown object" in verify_plan(battery, [PlanStep("lift_module", ("module_99",))])[0]


def test_an_unsolvable_task_is_no_plan_and_a_fallback_is_named(battery: PlanningTask) -> None:
    stuck = edits.remove_fact(battery, Atom("on_rack", ("screwdriver_1", "rack_1")))
    model = ScriptedModel(completions=[(".", "1, 2")])
    result = make_llm_guided_planner(model, beam=2).solve(stuck, 60)
    assert result.status is PlanStatus.NO_PLAN
    assert "every reachable state" in result.detail
    with_fallback = make_llm_guided_planner(model, beam=2, fallback=make_planner("pyperplan"))
    result = with_fallback.solve(stuck, 60)
    assert result.status is PlanStatus.NO_PLAN
    assert result.planner == "llm_guided+pyperplan" and "pyperplan took over" in result.detail


def test_the_deadline_and_the_call_budget_are_kept(battery: PlanningTask) -> None:
    model = ScriptedModel(completions=[(".", "1")])
    assert make_llm_guided_planner(model).solve(battery, 0).status is PlanStatus.TIMEOUT
    budget = make_llm_guided_planner(ScriptedModel(completions=[(".", "1")]), max_llm_calls=2)
    result = budget.solve(battery, 60)
    assert result.found and result.extra["llm_calls"] == 2
    assert result.extra["over_budget_nodes"] > 0


def test_the_prompt_puts_fixed_parts_first(battery: PlanningTask) -> None:
    options = _applicable(battery)
    prompt = guide_prompt(battery, [PlanStep("take_tool", ("wrench_1", "rack_1"))], options, 3)
    assert prompt.index("Initial state:") < prompt.index("Goal:") < prompt.index("Steps done")
    assert "1. (take_tool screwdriver_1 rack_1)" in prompt
    assert "Which 2 of these actions" in prompt


def test_make_planner_without_a_model_says_how_to_pass_one() -> None:
    with pytest.raises(CowpError) as err:
        make_planner("llm_guided")
    assert "needs a language model" in str(err.value)
    assert "make_llm_guided_planner(model" in str(err.value)
    with pytest.raises(CowpError):
        make_llm_guided_planner(ScriptedModel(), beam=0)


def test_cowp_replans_with_the_guided_planner_under_a_situation() -> None:
    spec = get_task("fill_cup")
    model = ScriptedModel(
        yes_no=[("hold the cup, if the cup is dirty", False), ("if ", True), ("bowl", True)],
        completions=[("guide a robot|Possible next actions", "1, 2")],
        default_yes_no=False,
    )
    planner = make_llm_guided_planner(model, beam=2)
    loop = build_loop("cowp", spec, model, planner)
    report = run_scheduled(loop, [ScheduledSituation("the cup is dirty", at_action="hold_cup")])
    assert report.outcome == "completed"
    assert report.planner == "llm_guided"
    assert any("hold_cup__cup_as" in str(s) for s in loop.executed_steps)


def test_cowp_run_planner_flag(monkeypatch, capsys) -> None:
    import contextlib

    from cowp_ros.cli import run as run_cli

    model = ScriptedModel(completions=[("Possible next actions", "1")])

    @contextlib.contextmanager
    def fake_open_model(args):
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    assert main(["run", "battery", "--planner", "llm_guided", "--beam", "2"]) == 0
    out = capsys.readouterr().out
    assert "planner: llm_guided+pyperplan" in out
    assert "outcome: completed" in out
    assert out.count("DO    did: place the module in the bin") >= 2  # both of pack 1
