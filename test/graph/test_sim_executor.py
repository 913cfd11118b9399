"""The executor's skill layer drives sim_world's fake robot, in real separate processes."""

from __future__ import annotations

import pytest
from graph_harness import Probe, partial_profile, scenario_file
from rclpy.action import ActionClient

from cowp_interfaces.action import ExecuteSkill
from cowp_interfaces.msg import PlanStep, Situation

pytestmark = [pytest.mark.ros, pytest.mark.slow]

SERVE_WATER = [
    ("find_cup", ["cup_1"]),
    ("grasp_cup", ["cup_1"]),
    ("walk_to", ["faucet_1"]),
    ("fill_water", ["cup_1", "faucet_1"]),
    ("walk_to", ["table_1"]),
    ("deliver_water", ["cup_1", "table_1"]),
]


def execute(probe: Probe, client: ActionClient, action: str, arguments: list[str]):
    goal = ExecuteSkill.Goal(step=PlanStep(action=action, arguments=arguments))
    handle = probe.wait_future(client.send_goal_async(goal), 20, f"{action} accepted")
    assert handle.accepted, action
    return probe.wait_future(handle.get_result_async(), 120, f"{action} result").result


def test_serve_water_plan_runs_on_the_simulated_robot(start_graph, probe: Probe) -> None:
    start_graph(partial_profile(["sim_world", "executor"], ["sim_world.publish_camera=false"]))
    situations = probe.listen(Situation, "/cowp/situations")
    client = ActionClient(probe.node, ExecuteSkill, "/cowp/execute_skill")
    assert client.wait_for_server(timeout_sec=30)
    probe.wait_heard("/cowp/situations")  # sim_world says "the cup is dirty" at find_cup
    for action, arguments in SERVE_WATER:
        result = execute(probe, client, action, arguments)
        assert result.success, f"{action}{arguments}: {result.message}"
    probe.spin_until(lambda: bool(situations), 5, "the scenario's situation")
    assert [s.text for s in situations] == ["the cup is dirty"]
    assert situations[0].object == "cup_1" and situations[0].source == "sim"


def test_grasping_a_missing_object_fails_with_a_reason(start_graph, probe, tmp_path) -> None:
    scenario = scenario_file(
        tmp_path,
        "missing_cup",
        {
            "task": "serve_water",
            "objects": {
                "cup_1": {"class": "cup", "location": "counter", "attributes": {"missing": True}}
            },
        },
    )
    start_graph(
        partial_profile(
            ["sim_world", "executor"],
            [f"sim_world.scenario={scenario}", "sim_world.publish_camera=false"],
        )
    )
    client = ActionClient(probe.node, ExecuteSkill, "/cowp/execute_skill")
    assert client.wait_for_server(timeout_sec=30)
    result = execute(probe, client, "grasp_cup", ["cup_1"])
    assert not result.success
    assert "closed" in result.message or "grasp" in result.message
