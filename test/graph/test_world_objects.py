"""One truth about what is present: the task manager plans with the objects the world
has, and refuses a step on any other before the robot moves.

Under the sim profile, a RunTask goal for serve_water whose cup is blocked used to pick
a stand-in from the whole problem (58 objects): it grasped `mug_2` twice, closing on
nothing since the scenario's world has `mug_1` only, and aborted. The model here is a
scripted OpenAI-compatible server (the chaos harness's), so the story is decided by the
graph, not by what a small model happens to answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from graph_harness import partial_profile

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.planning import PlanStep
from cowp_ros.ros.clients.task_client import Outcome, TaskClient
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


@pytest.fixture
def scripted_model() -> Iterator[ScriptedLLMServer]:
    # The cup with cutlery in it cannot be used; any stand-in can.
    with ScriptedLLMServer(SensibleModel(no=[r"still use the cup .*, if the cup is"])) as server:
        yield server


def run_goal(client: TaskClient, task: str, timeout_s: float = 240.0):
    client.wait_until_ready(60)
    client.run_task(task)
    deadline = time.monotonic() + timeout_s
    while not client.is_task_complete():
        assert time.monotonic() < deadline, "the task did not finish"
    return client.get_result()


@pytest.mark.ros
@pytest.mark.slow
def test_the_stand_in_is_one_the_sim_world_has(
    start_graph, scripted_model: ScriptedLLMServer, tmp_path: Path
) -> None:
    # No present_objects: what `cowp bringup --profile sim` runs, with a TaskClient goal.
    start_graph(
        partial_profile(
            NODES,
            [
                "sim_world.publish_camera=false",
                "sim_world.scenario=serve_water_cutlery_in_cup",
                f"commonsense.llm_url={scripted_model.url}",
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
        )
    )
    client = TaskClient()
    try:
        result = run_goal(client, "serve_water")
    finally:
        client.close()
    assert result.outcome is Outcome.COMPLETED, result.explanation
    world = set(load_scenario("serve_water_cutlery_in_cup").objects)
    executed = [step.split() for step in result.executed_steps]
    named = {word.strip("()") for step in executed for word in step[1:]}
    assert named <= world, f"the robot was sent for {sorted(named - world)}"
    assert any("mug_1" in step for step in result.executed_steps), result.executed_steps
    assert "instead of the cup" in result.explanation
