"""The same task, situation and model decide the same way whichever command runs them:
`cowp run` (one process), `cowp demo` (the graph it starts) and `cowp bringup`'s graph
with `cowp task send`. The model is a scripted OpenAI-compatible server named only by
its URL (no model name given anywhere): each command reads the name from its
`/v1/models`, so calibration, answer cache and report all name the same model."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from graph_harness import partial_profile
from own_task import write_own_task

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.tasks.sources import TASKS_ENV

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = ["sim_world", "planner", "commonsense", "executor", "task_manager"]
RUN_CLI = "import sys; from cowp_ros.cli import main; sys.exit(main())"
DECIDING = {"monitor", "predicate", "acquirer", "selection", "learned"}
SITUATION = "the can has a hole in its bottom"
WORLD = {
    "name": "water_plant_leaky_can",
    "task": "water_plant",
    "description": "water the plant; the watering can leaks",
    "objects": {
        "can_1": {"class": "bottle", "location": "shelf"},
        "jug_1": {"class": "bottle", "location": "counter"},
        "vase_1": {"class": "vase", "location": "counter"},
        "shelf_1": {"class": "shelf", "location": "shelf", "attributes": {"graspable": False}},
        "sink_1": {"class": "sink", "location": "sink", "attributes": {"graspable": False}},
        "plant_spot_1": {
            "class": "potted plant",
            "location": "dining_area",
            "attributes": {"graspable": False},
        },
    },
    # no object named: `cowp run --situation` names none either, so each grounds the
    # sentence the same way
    "events": [{"when": {"action": "find_can"}, "situation": SITUATION}],
}


def cowp(*arguments: str) -> list[str]:
    script = Path(sys.executable).with_name("cowp")
    command = [str(script)] if script.is_file() else [sys.executable, "-c", RUN_CLI]
    return [*command, *arguments]


@pytest.fixture
def model() -> Iterator[ScriptedLLMServer]:
    # The leaking can cannot be used; a jug can take its role, a vase cannot.
    rules = SensibleModel(no=[r"\. The can .*\. Can the robot still use the can\b", r"\ba vase\b"])
    with ScriptedLLMServer(rules, models=("water-model-7b",)) as server:
        yield server


def decisions(report: dict[str, Any]) -> dict[str, Any]:
    """What a run decided: its model, outcome and explanation, and each question it
    asked the model with the answer (in order), whoever ran it."""
    events = report["events"]
    seen = next(i for i, e in enumerate(events) if e["kind"] == "situation")
    # from the situation on: questions asked ahead of it, while the robot moved, are
    # told as they come by `cowp run` and kept in the graph section by the task manager
    asked = [e["text"] for e in events[seen:] if e["kind"] in DECIDING]
    return {
        "model": report["model"],
        "outcome": report["outcome"],
        "explanation": report["explanation"],
        "asked": asked,
    }


def only_report(folder: Path) -> dict[str, Any]:
    (path,) = [p for p in folder.glob("*.json") if p.name != "physics.json"]
    return dict(json.loads(path.read_text()))


def test_run_demo_and_the_graph_decide_the_same(
    start_graph, model: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = write_own_task(tmp_path / "elsewhere")
    world = tmp_path / "elsewhere" / "leaky_can.yaml"
    world.write_text(yaml.safe_dump(WORLD))
    monkeypatch.setenv(TASKS_ENV, "")
    llm = ["--llm-url", model.url, "--no-cache"]

    run_report = tmp_path / "run.json"
    done = subprocess.run(
        cowp("run", "--tasks", str(registry), "water_plant", "--situation", SITUATION,
             "--at", "grasp_can", "--report", str(run_report), *llm),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    by_run = decisions(json.loads(run_report.read_text()))

    out = tmp_path / "demo"
    done = subprocess.run(
        cowp("demo", "--tasks", str(registry), "--scenario", str(world), "--out", str(out),
             "--timeout", "300", *llm),
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "language model: water-model-7b at" in done.stdout
    (run_dir,) = out.iterdir()
    by_demo = decisions(only_report(run_dir))

    monkeypatch.setenv(TASKS_ENV, str(registry))  # `cowp bringup --tasks` does the same
    reports = tmp_path / "graph-reports"
    start_graph(
        partial_profile(
            NODES,
            [
                "sim_world.publish_camera=false",
                f"sim_world.scenario={world}",
                f"commonsense.llm_url={model.url}",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={reports}",
            ],
        )
    )
    done = subprocess.run(
        cowp("task", "send", "water_plant", "--timeout", "300"),
        capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    by_graph = decisions(only_report(reports))

    print(json.dumps([by_run, by_demo, by_graph], indent=1))
    assert by_run["model"] == "water-model-7b"
    assert by_run["outcome"] == "completed"
    assert "used a jug instead of the can" in by_run["explanation"]
    assert by_run["asked"]
    assert by_demo == by_run
    assert by_graph == by_run
