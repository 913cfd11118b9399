"""Every shipped task has a sim scenario: one blocking situation and one harmless one,
in a world the robot's configuration knows, with the story it expects (offline here; on
the sim graph in test/graph/test_task_scenarios_graph.py)."""

from __future__ import annotations

import pytest

from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.registry import build_loop
from cowp_ros.planning import make_planner
from cowp_ros.resources import share_path
from cowp_ros.sim.scenario import available_scenarios, load_scenario
from cowp_ros.sim.scenario_story import answer_rules
from cowp_ros.skills.config import load_robot_config
from cowp_ros.skills.roles import with_tasks
from cowp_ros.skills.skill_map import load_skill_map
from cowp_ros.skills.world import Whereabouts
from cowp_ros.tasks import all_tasks, get_task
from cowp_ros.tasks.presence import present_problem


def _declared() -> list[str]:
    """The scenario files that say, for each of their situations, whether it blocks:
    the ones whose story a test can check offline (the others leave it to the model)."""
    return sorted(
        name
        for name in available_scenarios()
        if all(event.blocks is not None for event in load_scenario(name).events)
    )


DECLARED = _declared()


def test_every_shipped_task_has_a_declared_scenario() -> None:
    covered = {load_scenario(name).task for name in DECLARED}
    assert set(all_tasks()) <= covered, sorted(set(all_tasks()) - covered)
    for name in available_scenarios():  # and every scenario is of a shipped task
        assert load_scenario(name).task in all_tasks(), name


@pytest.mark.parametrize("name", DECLARED)
def test_a_declared_scenario_has_one_blocking_situation(name: str) -> None:
    scenario = load_scenario(name)
    assert [e.blocks for e in scenario.events].count(True) == 1
    assert [e.blocks for e in scenario.events].count(False) <= 1
    assert scenario.expect in {"completed", "no_solution"}
    assert (scenario.stand_in is not None) == (scenario.expect == "completed")


@pytest.mark.parametrize("name", DECLARED)
def test_the_scenario_story_offline(name: str) -> None:
    """The task over the scenario's world, each situation raised after the step that
    raises it on the graph (its report reaches the loop before the next step)."""
    scenario = load_scenario(name)
    spec = get_task(scenario.task)
    task, _ = present_problem(
        spec.load(), spec.task_objects, world=scenario.objects, world_source="the scenario"
    )
    plan = make_planner("pyperplan").solve(task, 60).steps
    schedule = []
    for event in scenario.events:
        index = next(i for i, s in enumerate(plan) if event.matches(s.action, list(s.args)))
        schedule.append(ScheduledSituation(event.situation, at_step=index + 2, object=event.about))
    rules = [(pattern, 0.97 if yes else 0.02) for pattern, yes in answer_rules(scenario, task)]
    model = ScriptedModel(yes_no=rules, default_yes_no=True)
    report = run_scheduled(
        build_loop("grounded", spec, model, make_planner("pyperplan"), problem=task), schedule
    )
    assert report.outcome == scenario.expect, report.explanation
    if scenario.stand_in:
        kind = task.objects[scenario.stand_in]
        assert f"used a {kind} instead of" in report.explanation
    else:
        assert "no present object could take" in report.explanation
    # the harmless situation asked about, and kept the plan
    harmless = [e.situation for e in scenario.events if e.blocks is False]
    asked = " ".join(q for q in model.questions("yes_no")).lower()  # "The radio is on."
    assert all(h.lower() in asked for h in harmless)


@pytest.mark.parametrize("name", sorted(available_scenarios()))
def test_every_object_of_the_world_has_a_place_the_robot_knows(name: str) -> None:
    scenario = load_scenario(name)
    robot = load_robot_config(share_path("config", "robot.yaml"))
    skills = with_tasks(load_skill_map(share_path("config", "skills.yaml")), all_tasks().values())
    world = Whereabouts(
        set(robot.base.locations),
        location_aliases=skills.location_aliases,
        object_locations=skills.object_locations,
    )
    for thing in scenario.objects:
        assert world.location_of(thing) in robot.base.locations
