"""A task of one's own on the sim graph, end to end: its registry outside the checkout
(`COWP_TASKS`, inherited by every node), its own world (a scenario file beside it), a
goal sent with `cowp task send`, a situation published with `cowp task situation`, a
stand-in found among the world's objects, and the base driven where each step's role
says (`walk_to ?from ?to` drives to `?to`)."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from graph_harness import Probe, partial_profile
from own_task import write_own_task

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.resources import share_path
from cowp_ros.skills.config import load_robot_config
from cowp_ros.tasks.sources import TASKS_ENV

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NODES = ["sim_world", "planner", "commonsense", "executor", "task_manager"]
RUN_CLI = "import sys; from cowp_ros.cli import main; sys.exit(main())"

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
    "events": [],
}


def cowp(*arguments: str) -> list[str]:
    script = Path(sys.executable).with_name("cowp")
    command = [str(script)] if script.is_file() else [sys.executable, "-c", RUN_CLI]
    return [*command, *arguments]


@pytest.fixture
def model() -> Iterator[ScriptedLLMServer]:
    # The leaking can cannot be used; a jug can take its role, a vase cannot.
    rules = SensibleModel(no=[r"\. The can .*\. Can the robot still use the can\b", r"\ba vase\b"])
    with ScriptedLLMServer(rules) as server:
        yield server


def nearest_location(x: float, y: float, locations: dict) -> str:
    return min(locations, key=lambda n: math.hypot(locations[n].x - x, locations[n].y - y))


def test_own_task_on_the_sim_graph(
    start_graph, model: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from geometry_msgs.msg import PoseStamped

    registry = write_own_task(tmp_path / "elsewhere")
    world = tmp_path / "elsewhere" / "leaky_can.yaml"
    world.write_text(yaml.safe_dump(WORLD))
    monkeypatch.setenv(TASKS_ENV, str(registry))  # every node and command inherits it
    start_graph(
        partial_profile(
            NODES,
            [
                "sim_world.publish_camera=false",
                f"sim_world.scenario={world}",
                f"commonsense.llm_url={model.url}",
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
        )
    )
    robot = load_robot_config(share_path("config", "robot.yaml"))
    probe = Probe()
    goals = probe.listen(PoseStamped, robot.base.goal_topic)
    probe.wait_heard(robot.base.goal_topic)  # the base's first goal must not be missed
    spinning = threading.Event()

    def spin() -> None:
        while not spinning.is_set():
            probe.executor.spin_once(timeout_sec=0.05)

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    send = subprocess.Popen(
        cowp("task", "send", "water the plant", "--timeout", "300"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    published = ""
    try:
        assert send.stdout is not None
        for line in send.stdout:
            lines.append(line.rstrip())
            if not published and "doing: find the can" in line:
                done = subprocess.run(
                    cowp("task", "situation", "the can has a hole in its bottom",
                         "--object", "can_1", "--source", "operator"),
                    capture_output=True, text=True, timeout=60, check=False,
                )  # fmt: skip
                published = done.stdout + done.stderr
        send.wait(timeout=60)
    finally:
        if send.poll() is None:
            send.kill()
        spinning.set()
        spinner.join(5)
        probe.close()
    story = "\n".join(lines)
    assert "published on /cowp/situations: 'the can has a hole in its bottom'" in published
    assert send.returncode == 0, story
    assert "saw (operator): the can has a hole in its bottom" in story
    assert "outcome: completed: used a jug instead of the can" in story
    assert "water_plant__can_as_jug(jug_1, plant_spot_1)" in story
    assert "walk_to(shelf_1, sink_1)" in story
    # where the base was sent: the shelf (the can), the counter (the jug), then each
    # walk_to's destination and the plant, never back to where a walk starts
    visited: list[str] = []
    for goal in goals:
        place = nearest_location(goal.pose.position.x, goal.pose.position.y, robot.base.locations)
        if not visited or visited[-1] != place:
            visited.append(place)
    assert visited == ["shelf", "counter", "sink", "dining_area"], visited


def test_the_graph_verbs_say_when_no_graph_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_DOMAIN_ID", str(int(time.time()) % 50 + 150))  # an empty domain
    done = subprocess.run(
        cowp("task", "situation", "the cup is dirty", "--wait", "1"),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "nobody listens on /cowp/situations after 1 s" in done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run(
        cowp("task", "cancel", "--wait", "1"), capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "no task manager serves /cowp/run_task" in done.stderr


def test_own_task_in_a_world_made_from_its_problem(
    start_graph, model: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No scenario file: `cowp bringup --task water_plant` gives sim_world the world of
    the task's problem, so the goal finds its objects."""
    from cowp_ros.cli._task_world import write_task_world
    from cowp_ros.tasks.sources import add_task_files

    registry = write_own_task(tmp_path / "elsewhere")
    monkeypatch.setenv(TASKS_ENV, str(registry))  # every node and command inherits it
    add_task_files([str(registry)])
    world = write_task_world("water_plant", tmp_path / "logs")
    start_graph(
        partial_profile(
            NODES,
            [
                "sim_world.publish_camera=false",
                f"sim_world.scenario={world}",
                f"commonsense.llm_url={model.url}",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={tmp_path / 'reports'}",
            ],
        )
    )
    done = subprocess.run(
        cowp("task", "send", "water the plant", "--timeout", "300"),
        capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "outcome: completed" in done.stdout
    assert "water_plant(can_1, plant_spot_1)" in done.stdout, done.stdout
