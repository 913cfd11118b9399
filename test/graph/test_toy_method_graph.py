"""A method of one's own on the graph: `method:=toy` on the commonsense node and the
task manager, the module found through `COWP_METHODS` (inherited by every node); and
two nodes that run different methods refuse the task with a reason."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from graph_harness import partial_profile

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.cowp.report import read_report
from cowp_ros.methods.registry import METHODS_ENV
from cowp_ros.ros.clients.task_client import Outcome, TaskClient

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TOY_FOLDER = Path(__file__).resolve().parents[1] / "methods"


@pytest.fixture
def model() -> Iterator[ScriptedLLMServer]:
    # Only a mug may stand in for the cup.
    with ScriptedLLMServer(SensibleModel(no=[r"can an? (?!mug\b)\w+ be used instead"])) as server:
        yield server


@pytest.fixture
def toy_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(METHODS_ENV, "toy_method")
    paths = [str(TOY_FOLDER), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))


def run_to_end(task: str, timeout_s: float = 300.0):
    client = TaskClient()
    try:
        client.wait_until_ready(60)
        client.run_task(task)
        deadline = time.monotonic() + timeout_s
        while not client.is_task_complete():
            assert time.monotonic() < deadline, "the task did not finish"
        return client.get_result()
    finally:
        client.close()


def test_a_registered_method_runs_on_the_graph(
    start_graph, model: ScriptedLLMServer, toy_on_path: None, tmp_path: Path
) -> None:
    start_graph(
        partial_profile(
            ["sim_world", "planner", "commonsense", "executor", "task_manager"],
            [
                "sim_world.publish_camera=false",
                f"commonsense.llm_url={model.url}",
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                "commonsense.method=toy",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
        )
    )
    result = run_to_end("serve_water")  # the scenario: the cup is dirty, seen at find_cup
    assert result.outcome is Outcome.COMPLETED, result.explanation
    assert result.explanation == "used a mug instead of the cup: the cup is dirty"
    report = read_report(result.report_path)
    assert not report.events_of("monitor")  # the toy monitor asks no question
    assert report.events_of("acquirer") and report.model == "scripted"


def test_the_task_manager_runs_the_commonsense_nodes_method_and_says_so(
    start_graph, model: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The method is chosen once, on the commonsense node: the task manager has no method
    of its own to disagree with; it says at start-up which one its tasks run, and a peer
    cannot change it (the parameter is read-only)."""
    start_graph(
        partial_profile(
            ["planner", "commonsense", "task_manager"],
            [
                f"commonsense.llm_url={model.url}",
                "commonsense.llm_model=scripted",
                "commonsense.method=cowp",
                "task_manager.world_node=''",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
        )
    )
    log = tmp_path / "logs" / "task_manager.log"
    deadline = time.monotonic() + 60
    while "tasks run /commonsense's method: cowp" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    # No executor here: the run plans with the adopted method, then stops at the first step.
    result = run_to_end("fill_cup")
    assert "the executor is not serving" in result.explanation, result.explanation
    # the paper's COWP asks nothing ahead of a situation; the default method would
    assert read_report(result.report_path).sections["graph"]["asked_ahead"] == []
