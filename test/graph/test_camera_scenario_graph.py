"""The camera closes the loop on the sim graph: sim_world's wrist camera shows the cup
with something in it while the robot finds it, the situation detector sees that in the
pixels, the task manager takes its situation, and the plan changes to the mug. No node
is told the situation as text. The model is the chaos harness's scripted server,
answering by the scenario's own rules, so the story is the stack's, not a model's."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from graph_harness import partial_profile

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.cli.demo import CAMERA_TOPICS, RECORDED_TOPICS
from cowp_ros.cowp.run_report import read_report
from cowp_ros.perception.models import default_model_path
from cowp_ros.ros.bag_info import read_bag_info
from cowp_ros.ros.bags import BagRecorder
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.ros.names import (
    CURRENT_STEP_TOPIC,
    SITUATIONS_TOPIC,
    TASK_OUTCOMES_TOPIC,
    WRIST_IMAGE_TOPIC,
)
from cowp_ros.ros.result_delivery import OUTCOMES_QOS
from cowp_ros.sim.scenario import load_scenario
from cowp_ros.sim.scenario_story import no_patterns
from cowp_ros.tasks import get_task
from cowp_ros.tasks.presence import present_problem

pytestmark = [pytest.mark.ros, pytest.mark.slow]

SCENARIO = "serve_water_camera"
NODES = ["sim_world", "planner", "commonsense", "executor", "task_manager", "situation_detector"]
SEEN = "the cup is occupied: a person in it"


@pytest.fixture
def served() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def test_images_through_the_detector_change_the_plan(
    start_graph, served: ScriptedLLMServer, tmp_path: Path
) -> None:
    if not default_model_path().is_file():
        if "perception" in os.environ.get("COWP_SETUP_SKIP", "").split(","):
            pytest.skip("perception setup skipped (COWP_SETUP_SKIP)")
        pytest.fail(f"no detector model at {default_model_path()}: run `make setup`")
    scenario = load_scenario(SCENARIO)
    (event,) = scenario.events
    assert (event.situation, event.seen_by) == (SEEN, "situation_detector")
    spec = get_task(scenario.task)
    task, _ = present_problem(
        spec.load(), spec.task_objects, world=scenario.objects, world_source="the scenario"
    )
    served.responder = SensibleModel(no=no_patterns(scenario, task))
    start_graph(
        partial_profile(
            NODES,
            [
                f"sim_world.scenario={SCENARIO}",
                "commonsense.llm_url=" + served.url,
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={tmp_path / 'reports'}",
                "situation_detector.backend=onnxruntime",
            ],
            base="sim_camera",
        ),
        ready_timeout_s=180.0,
    )
    client = TaskClient()
    # Recorded as `cowp demo` records a camera scenario: inputs, images and the outcome.
    recorder = BagRecorder(
        client.node,
        tmp_path / "bag",
        {**RECORDED_TOPICS, **CAMERA_TOPICS},
        expected_qos={TASK_OUTCOMES_TOPIC: OUTCOMES_QOS},
    )
    started = time.monotonic()
    try:
        client.wait_until_ready(60)
        client.run_task(scenario.task)
        result = client.get_result(timeout_s=300)
        assert recorder.take_until(
            TASK_OUTCOMES_TOPIC, lambda: client.executor.spin_once(timeout_sec=0.1), 30.0
        )
    finally:
        recorder.close()
        client.close()
    print(f"{SCENARIO}: {result.outcome.value} in {time.monotonic() - started:.1f} s")
    logs = tmp_path / "logs"
    detector_log = next(logs.glob("situation_detector*")).read_text()
    assert result.outcome.value == "completed", f"{result.explanation}\n{detector_log}"
    assert result.handled_situations == [SEEN], detector_log
    assert any("mug_1" in step for step in result.executed_steps), result.executed_steps
    assert "used a mug instead of the cup" in result.explanation
    report = read_report(result.report_path)
    saw = [e["text"] for e in report.events_of("situation")]
    assert any(text.startswith(f"saw (situation_detector): {SEEN}") for text in saw), saw
    # sim_world said nothing: the situation came from the pixels alone
    sim_log = next(logs.glob("sim_world*")).read_text()
    assert f"situation: {SEEN}" not in sim_log
    assert f"situation: {SEEN}" in detector_log
    # The run's bag holds its outcome, the situation and the pictures that made it.
    counts = {t.topic: t.messages for t in read_bag_info(tmp_path / "bag").topics}
    assert counts[TASK_OUTCOMES_TOPIC] == 1 and counts[SITUATIONS_TOPIC] == 1, counts
    assert counts[WRIST_IMAGE_TOPIC] > 0 and counts[CURRENT_STEP_TOPIC] >= 7, counts
