"""The camera closes the loop on the sim graph: sim_world's wrist camera shows the cup
with something in it while the robot finds it, the situation detector sees that in the
pixels, the task manager takes its situation, and the plan changes to the mug. No node
is told the situation as text. The run's bag, replayed step by step into a graph whose
camera streams nothing, leads to the same decisions. The model is the chaos harness's
scripted server, answering by the scenario's own rules, so the story is the stack's,
not a model's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from graph_harness import partial_profile

from cowp_ros.bringup.spec import Profile
from cowp_ros.bringup.supervisor import Supervisor
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.cli.demo import CAMERA_TOPICS, RECORDED_TOPICS
from cowp_ros.cowp.report import read_report
from cowp_ros.perception.models import default_model_path
from cowp_ros.ros.bag_info import read_bag_info
from cowp_ros.ros.bags import BagRecorder
from cowp_ros.ros.clients.task_client import TaskClient, TaskResult
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
COWP = Path(sys.executable).with_name("cowp")


@pytest.fixture
def served() -> Iterator[ScriptedLLMServer]:
    """The scripted model, answering by the scenario's rules; needs the detector model."""
    if not default_model_path().is_file():
        if "perception" in os.environ.get("COWP_SETUP_SKIP", "").split(","):
            pytest.skip("perception setup skipped (COWP_SETUP_SKIP)")
        pytest.fail(f"no detector model at {default_model_path()}: run `make setup`")
    scenario = load_scenario(SCENARIO)
    spec = get_task(scenario.task)
    task, _ = present_problem(
        spec.load(), spec.task_objects, world=scenario.objects, world_source="the scenario"
    )
    with ScriptedLLMServer() as server:
        server.responder = SensibleModel(no=no_patterns(scenario, task))
        yield server


def camera_profile(served: ScriptedLLMServer, tmp_path: Path, extra: list[str]) -> Profile:
    return partial_profile(
        NODES,
        [
            f"sim_world.scenario={SCENARIO}",
            f"commonsense.llm_url={served.url}",
            "commonsense.llm_model=scripted",
            "commonsense.answer_cache=false",
            f"task_manager.report_dir={tmp_path / 'reports'}",
            "situation_detector.backend=onnxruntime",
            *extra,
        ],
        base="sim_camera",
    )


def recorded_run(
    start_graph: Callable[..., Supervisor], served: ScriptedLLMServer, tmp_path: Path
) -> tuple[TaskResult, Path, Supervisor]:
    """The camera run, recorded as `cowp demo` records a camera scenario."""
    supervisor = start_graph(camera_profile(served, tmp_path, []), ready_timeout_s=180.0)
    client = TaskClient()
    bag = tmp_path / "bag"
    recorder = BagRecorder(
        client.node,
        bag,
        {**RECORDED_TOPICS, **CAMERA_TOPICS},
        expected_qos={TASK_OUTCOMES_TOPIC: OUTCOMES_QOS},
    )
    started = time.monotonic()
    try:
        client.wait_until_ready(60)
        client.run_task("serve_water")
        result = client.get_result(timeout_s=300)
        assert recorder.take_until(
            TASK_OUTCOMES_TOPIC, lambda: client.executor.spin_once(timeout_sec=0.1), 30.0
        )
    finally:
        recorder.close()
        client.close()
    print(f"{SCENARIO}: {result.outcome.value} in {time.monotonic() - started:.1f} s")
    return result, bag, supervisor


def test_images_through_the_detector_change_the_plan(
    start_graph, served: ScriptedLLMServer, tmp_path: Path
) -> None:
    (event,) = load_scenario(SCENARIO).events
    assert (event.situation, event.seen_by) == (SEEN, "situation_detector")
    result, bag, _ = recorded_run(start_graph, served, tmp_path)
    logs = tmp_path / "logs"
    detector_log = (logs / "situation_detector.log").read_text()
    assert result.outcome.value == "completed", f"{result.explanation}\n{detector_log}"
    assert result.handled_situations == [SEEN], detector_log
    assert any("mug_1" in step for step in result.executed_steps), result.executed_steps
    assert "used a mug instead of the cup" in result.explanation
    saw = [e["text"] for e in read_report(result.report_path).events_of("situation")]
    assert any(text.startswith(f"saw (situation_detector): {SEEN}") for text in saw), saw
    # sim_world said nothing: the situation came from the pixels alone
    assert f"situation: {SEEN}" not in (logs / "sim_world.log").read_text()
    assert f"situation: {SEEN}" in detector_log
    # The run's bag holds its outcome, the situation and the pictures that made it.
    counts = {t.topic: t.messages for t in read_bag_info(bag).topics}
    assert counts[TASK_OUTCOMES_TOPIC] == 1 and counts[SITUATIONS_TOPIC] == 1, counts
    assert counts[WRIST_IMAGE_TOPIC] > 0 and counts[CURRENT_STEP_TOPIC] >= 7, counts


def test_a_recorded_camera_run_replays_to_the_same_decisions(
    start_graph, served: ScriptedLLMServer, tmp_path: Path
) -> None:
    """Record the camera run; then, on a graph whose sim_world streams no pictures,
    replay only the recorded pictures, each step's while the live run takes that step
    (`cowp replay --follow-steps`): the detector sees the same cup, and the task manager
    decides the same."""
    recorded, bag, first = recorded_run(start_graph, served, tmp_path)
    first.stop()  # the same node names come up again below
    profile = camera_profile(served, tmp_path, ["sim_world.publish_camera=false"])
    supervisor = Supervisor(profile, tmp_path / "replay_logs", say=lambda _m: None)
    replay: subprocess.Popen[str] | None = None
    said: list[str] = []
    try:
        supervisor.start()
        supervisor.wait_ready(180.0)
        replay = subprocess.Popen(
            [str(COWP), "replay", str(bag), "--follow-steps",
             "--topics", WRIST_IMAGE_TOPIC, "--wait-subscribers", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert replay.stdout is not None
        for line in replay.stdout:  # ready once it follows the live executor's steps
            said.append(line)
            if line.startswith("following the steps"):
                break
        assert said and said[-1].startswith("following the steps"), "".join(said)
        client = TaskClient()
        try:
            client.wait_until_ready(60)
            client.run_task("serve_water")
            replayed = client.get_result(timeout_s=300)
        finally:
            client.close()
        out, _ = replay.communicate(timeout=180)
        said.append(out)
    finally:
        if replay is not None and replay.poll() is None:
            replay.kill()
        supervisor.stop()
    story = "".join(said)
    assert replay.returncode == 0, story
    assert "step find_cup(cup_1):" in story
    assert (replayed.outcome, replayed.handled_situations, replayed.executed_steps) == (
        recorded.outcome,
        recorded.handled_situations,
        recorded.executed_steps,
    ), story
    log = (tmp_path / "replay_logs" / "situation_detector.log").read_text()
    assert f"situation: {SEEN}" in log
