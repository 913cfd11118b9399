"""Every shipped task on the sim graph: its scenario's world and situations from
sim_world, a RunTask goal, the story the scenario expects (the stand-in it names, or no
solution, said), through real node processes. The model is the chaos harness's scripted
server, answering by the scenario's own rules (`cowp_ros.sim.scenario_story`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from graph_harness import partial_profile

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.resources import share_path
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.sim.scenario import available_scenarios, load_scenario
from cowp_ros.sim.scenario_story import no_patterns
from cowp_ros.tasks import all_tasks, get_task
from cowp_ros.tasks.presence import present_problem

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = ["sim_world", "planner", "commonsense", "executor", "task_manager"]
# The scenarios whose situations sim_world reports (a camera scenario's come from the
# detector: test_camera_scenario_graph.py).
TASK_SCENARIOS = sorted(
    name
    for name in available_scenarios()
    if any(e.blocks for e in load_scenario(name).events)
    and not any(e.seen_by for e in load_scenario(name).events)
)


def test_one_scenario_a_task() -> None:
    assert sorted(load_scenario(n).task for n in TASK_SCENARIOS) == sorted(all_tasks())


@pytest.fixture(scope="module")
def fast_robot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """config/robot.yaml with a quicker simulated base and arm (topics, locations and
    poses unchanged): the eight stories cost CI a few minutes, not ten. sim_world and
    the executor read the same file, so the executor's timing checks hold."""
    data = yaml.safe_load(share_path("config", "robot.yaml").read_text())
    data["sim"].update(base_speed_m_s=4.0, base_turn_speed_rad_s=6.0)
    data["arm"].update(max_joint_velocity_rad_s=3.0, min_move_duration_s=0.2)
    path = tmp_path_factory.mktemp("robot") / "fast_robot.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def served() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.mark.parametrize("name", TASK_SCENARIOS)
def test_the_task_scenario_on_the_sim_graph(
    name: str, start_graph, served: ScriptedLLMServer, fast_robot: Path, tmp_path: Path
) -> None:
    scenario = load_scenario(name)
    spec = get_task(scenario.task)
    task, _ = present_problem(
        spec.load(), spec.task_objects, world=scenario.objects, world_source="the scenario"
    )
    served.responder = SensibleModel(no=no_patterns(scenario, task))
    start_graph(
        partial_profile(
            NODES,
            [
                "sim_world.publish_camera=false",
                f"sim_world.scenario={name}",
                "sim_world.perceive_delay_s=0.1",
                f"sim_world.robot_config={fast_robot}",
                f"executor.robot_config={fast_robot}",
                f"commonsense.llm_url={served.url}",
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
        )
    )
    client = TaskClient()
    started = time.monotonic()
    try:
        client.wait_until_ready(60)
        client.run_task(scenario.task)
        result = client.get_result(timeout_s=300)
    finally:
        client.close()
    print(f"{name}: {result.outcome.value} in {time.monotonic() - started:.1f} s")
    assert result.outcome.value == scenario.expect, result.explanation
    said = {e.situation for e in scenario.events}
    assert set(result.handled_situations) == said
    if scenario.stand_in:
        assert any(scenario.stand_in in step for step in result.executed_steps), (
            result.executed_steps
        )
        assert f"used a {task.objects[scenario.stand_in]} instead of" in result.explanation
    else:
        assert "no present object could take" in result.explanation
    assert all(
        word.strip("(),") in scenario.objects
        for step in result.executed_steps
        for word in step.replace("(", " ").replace(",", " ").split()[1:]
    ), result.executed_steps
