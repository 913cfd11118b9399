"""Shipped scenarios in the physics world, through the robot profile's own backends.

The executor runs its action backends (FollowJointTrajectory, ParallelGripperCommand,
NavigateToPose, the arrival check on TF) against physics_world, which serves them over
MuJoCo; the model is the scripted server answering by each scenario's rules. After the
run the physics report is read back: the object the plan used was lifted between the
pads and put down where the plan said, and no safety invariant was broken."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from graph_harness import node_log_trouble, partial_profile

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.sim.scenario import load_scenario
from cowp_ros.sim.scenario_story import no_patterns
from cowp_ros.tasks import get_task
from cowp_ros.tasks.presence import present_problem

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = ["physics_world", "planner", "commonsense", "executor", "task_manager"]
# scenario -> the objects carried and the surface each should end on, the fronts opened
CARRIED = {
    "serve_water_cutlery_in_cup": ({"mug_1": "table"}, ()),
    "fill_cup_cracked_cup": ({"mug_1": "table"}, ()),
    "set_table_chipped_plate": ({"bowl_1": "table", "fork_1": "table"}, ("cupboard_1",)),
}
# serve_water_harmless (the cup itself carried) runs in bench_physics.py; CI keeps to
# the three tasks above to stay within its time for the physics tests.


@pytest.fixture
def served() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.mark.parametrize("name", sorted(CARRIED))
def test_the_scenario_in_physics(
    name: str, start_graph, served: ScriptedLLMServer, tmp_path: Path
) -> None:
    scenario = load_scenario(name)
    spec = get_task(scenario.task)
    task, _ = present_problem(
        spec.load(), spec.task_objects, world=scenario.objects, world_source="the scenario"
    )
    served.responder = SensibleModel(no=no_patterns(scenario, task))
    report = tmp_path / "physics.json"
    graph = start_graph(
        partial_profile(
            NODES,
            [
                f"physics_world.scenario={name}",
                "physics_world.real_time_factor=4.0",
                "physics_world.perceive_delay_s=0.1",
                f"physics_world.report_path={report}",
                f"commonsense.llm_url={served.url}",
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
            base="physics",
        )
    )
    client = TaskClient()
    started = time.monotonic()
    try:
        client.wait_until_ready(60)
        client.run_task(scenario.task)
        result = client.get_result(timeout_s=400)
    finally:
        client.close()
    took = time.monotonic() - started
    graph.stop()
    trouble = node_log_trouble(tmp_path / "logs")
    print(f"{name}: {result.outcome.value} in {took:.1f} s")
    assert result.outcome.value == scenario.expect, f"{result.explanation}\n{trouble}"
    physics = json.loads(report.read_text())
    print(json.dumps(physics, indent=1))
    assert physics["violations"] == [], physics["violations"]
    carried, opened = CARRIED[name]
    for thing, destination in carried.items():
        record = physics["objects"][thing]
        assert record["held"] and record["highest_lift_m"] > 0.1, (thing, record)
        assert record["resting_on"] == destination, (thing, record)
    for other, kept in physics["objects"].items():
        if other not in carried:
            assert not kept["held"] and kept["highest_lift_m"] < 0.02, (other, kept)
    for front in opened:
        assert physics["opened_m"][front] > 0.1, physics["opened_m"]


def test_the_wrist_camera_is_rendered_and_published_as_a_driver_does(start_graph, probe) -> None:
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    frames: list[Image] = []
    probe.node.create_subscription(
        Image, "/wrist_camera/image_raw", frames.append, qos_profile_sensor_data
    )
    start_graph(
        partial_profile(
            ["physics_world"],
            ["physics_world.camera_rate_hz=4.0", "physics_world.start_location=counter"],
            base="physics",
        )
    )
    probe.spin_until(lambda: len(frames) >= 2, 60, "two wrist camera frames")
    frame = frames[-1]
    assert (frame.width, frame.height, frame.encoding) == (320, 240, "rgb8")
    assert frame.header.frame_id == "wrist_camera_optical_frame"
    assert len(frame.data) == 320 * 240 * 3 and len(set(bytes(frame.data[:3000]))) > 1
