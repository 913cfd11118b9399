"""Physical faults in the physics world, one plan step at a time through the executor's
robot backends: each ends in a recovered step or a clear failure, never a false done.

- the base rests anywhere within Nav2's goal tolerance: the executor reads where it
  stopped on TF, corrects, and grasps where the cup is;
- the cup stands 5 cm off its spot: grasped from its pose on TF, or where the wrist
  depth camera sees it; with neither, the grasp at the calibrated spot misses and the
  step fails saying the fingers closed on nothing;
- a slippery cup slips out as it is lifted: the step fails saying so;
- an arm trajectory is aborted half-way: the step fails with the controller's error,
  and the same step run again succeeds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graph_harness import Probe, partial_profile, scenario_file
from rclpy.action import ActionClient

from cowp_interfaces.action import ExecuteSkill
from cowp_interfaces.msg import PlanStep

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = ["physics_world", "executor"]


def cup_scenario(tmp_path: Path, **attributes: object) -> Path:
    return scenario_file(
        tmp_path,
        "one_cup",
        {
            "task": "serve_water",
            "objects": {
                "cup_1": {"class": "cup", "location": "counter", "attributes": attributes},
                "table_1": {
                    "class": "dining table",
                    "location": "table",
                    "attributes": {"graspable": False},
                },
            },
        },
    )


def start(start_graph, tmp_path: Path, scenario: Path, *overrides: str) -> tuple[object, Path]:
    report = tmp_path / "physics.json"
    graph = start_graph(
        partial_profile(
            NODES,
            [
                f"physics_world.scenario={scenario}",
                "physics_world.real_time_factor=4.0",
                "physics_world.scenario_events=false",
                f"physics_world.report_path={report}",
                *overrides,
            ],
            base="physics",
        )
    )
    return graph, report


def execute(probe: Probe, action: str, *arguments: str):
    client = ActionClient(probe.node, ExecuteSkill, "/cowp/execute_skill")
    assert client.wait_for_server(timeout_sec=30)
    goal = ExecuteSkill.Goal(step=PlanStep(action=action, arguments=list(arguments)))
    handle = probe.wait_future(client.send_goal_async(goal), 20, f"{action} accepted")
    assert handle.accepted
    result = probe.wait_future(handle.get_result_async(), 180, f"{action} result").result
    client.destroy()
    return result


def physics_report(graph, report: Path) -> dict:
    graph.stop()
    return json.loads(report.read_text())


def test_a_base_resting_anywhere_within_the_tolerance_is_corrected(
    start_graph, probe: Probe, tmp_path: Path
) -> None:
    graph, report = start(
        start_graph,
        tmp_path,
        cup_scenario(tmp_path),
        "physics_world.faults=[stop_anywhere]",
        "physics_world.fault_seed=3",
    )
    result = execute(probe, "grasp_cup", "cup_1")
    assert result.success, result.message
    physics = physics_report(graph, report)
    assert physics["objects"]["cup_1"]["held"] and physics["violations"] == []


@pytest.mark.parametrize(
    "poses, depth", [(True, False), (False, True), (False, False)], ids=["tf", "depth", "none"]
)
def test_a_cup_moved_5_cm_is_grasped_where_it_is_or_missed_clearly(
    start_graph, probe: Probe, tmp_path: Path, poses: bool, depth: bool
) -> None:
    graph, report = start(
        start_graph,
        tmp_path,
        cup_scenario(tmp_path, offset=[0.0, 0.05]),
        f"physics_world.publish_object_poses={str(poses).lower()}",
        f"physics_world.depth_rate_hz={4.0 if depth else 0.0}",
        f"executor.look_with_depth={str(depth).lower()}",
    )
    result = execute(probe, "grasp_cup", "cup_1")
    physics = physics_report(graph, report)
    if poses or depth:
        assert result.success, result.message
        assert physics["objects"]["cup_1"]["held"]
    else:
        assert not result.success
        assert "grasp failed: fingers closed to" in result.message, result.message
        assert not physics["objects"]["cup_1"]["held"]
    assert physics["violations"] == []


def test_a_slippery_cup_fails_the_step_saying_it_slipped(
    start_graph, probe: Probe, tmp_path: Path
) -> None:
    graph, report = start(start_graph, tmp_path, cup_scenario(tmp_path, friction=0.02))
    result = execute(probe, "grasp_cup", "cup_1")
    assert not result.success
    assert "slipped out of the fingers" in result.message, result.message
    physics = physics_report(graph, report)
    assert physics["objects"]["cup_1"]["highest_lift_m"] < 0.05


def test_a_trajectory_aborted_half_way_fails_the_step_and_a_retry_recovers(
    start_graph, probe: Probe, tmp_path: Path
) -> None:
    graph, report = start(
        start_graph, tmp_path, cup_scenario(tmp_path), "physics_world.faults=[abort_trajectory:3]"
    )
    first = execute(probe, "grasp_cup", "cup_1")
    assert not first.success
    assert "controller error -4" in first.message and "half-way" in first.message, first.message
    again = execute(probe, "grasp_cup", "cup_1")
    assert again.success, again.message
    physics = physics_report(graph, report)
    assert physics["objects"]["cup_1"]["held"] and physics["violations"] == []
