"""One truth about what is present: the task manager plans with the objects the world
has, and refuses a step on any other before the robot moves.

Under the sim profile, a RunTask goal for serve_water whose cup is blocked used to pick
a stand-in from the whole problem (58 objects): it grasped `mug_2` twice, closing on
nothing since the scenario's world has `mug_1` only, and aborted. The graph run that
reproduces it is `serve_water_cutlery_in_cup` in test_task_scenarios_graph.py (no
present_objects, a TaskClient goal, the cup blocked, the stand-in must be mug_1).
"""

from __future__ import annotations

import pytest

from cowp_ros.planning import PlanStep
from cowp_ros.sim.scenario import load_scenario
from cowp_ros.tasks import get_task
from cowp_ros.tasks.presence import Presence, present_problem

NODES = ["sim_world", "planner", "commonsense", "executor", "task_manager"]


def test_a_run_plans_with_the_world_objects_only() -> None:
    spec = get_task("serve_water")
    world = load_scenario("serve_water_cutlery_in_cup").objects
    task, presence = present_problem(
        spec.load(), spec.task_objects, world=world, world_source="sim_world"
    )
    assert set(task.problem_object_names) == set(world) & set(spec.load().problem_object_names)
    assert "mug_1" in task.problem_object_names and "mug_2" not in task.problem_object_names
    assert presence.refusal(PlanStep("grasp_cup", ("mug_1",))) is None
    refusal = presence.refusal(PlanStep("grasp_cup", ("mug_2",)))
    assert refusal is not None
    assert refusal.startswith("refused (grasp_cup mug_2): mug_2 is not in the world")
    assert "(sim_world has counter_1, cup_1, faucet_1, fork_1, mug_1," in refusal


def test_a_world_without_what_the_goal_needs_is_said() -> None:
    spec = get_task("serve_water")
    with pytest.raises(Exception, match="the world has no table_1, which the task's goal needs"):
        present_problem(
            spec.load(), spec.task_objects, world=["cup_1", "faucet_1"], world_source="sim_world"
        )


def test_unknown_presence_refuses_nothing() -> None:
    assert Presence(None, "the problem file").refusal(PlanStep("grasp_cup", ("mug_2",))) is None


def test_a_world_of_another_task_names_what_it_holds_and_the_fix() -> None:
    from cowp_ros.errors import CowpError

    spec = get_task("fill_cup")  # a world of serve_water's objects only
    world = ["counter_1", "cup_9", "faucet_9", "mug_9"]
    with pytest.raises(CowpError) as caught:
        present_problem(spec.load(), spec.task_objects, world=world, world_source="sim_world")
    assert "(sim_world has counter_1, cup_9, faucet_9, mug_9)" in caught.value.message
    assert "a scenario of the task (sim_world.scenario=FILE" in caught.value.hint
