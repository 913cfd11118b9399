"""A shipped bag replayed into the live replay-profile graph, through `cowp replay`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from graph_harness import node_log_trouble, wait_until_executing

from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
from cowp_ros.ros.bags import deserialize, read_bag
from cowp_ros.ros.clients.task_client import Outcome, TaskClient

pytestmark = [pytest.mark.ros, pytest.mark.llm, pytest.mark.slow]

BAG = Path(__file__).resolve().parents[1] / "data" / "bags" / "situations_dirty_cup"
COWP = Path(sys.executable).with_name("cowp")


def test_the_shipped_bag_holds_two_situations() -> None:
    texts = [deserialize(r).text for r in read_bag(BAG)]
    assert texts == ["the cup is dirty", "the fridge is white"]


def test_replayed_situations_reach_the_task_manager(start_graph, local_llm, tmp_path: Path) -> None:
    url, model = local_llm
    profile = with_parameter_overrides(
        load_profile("replay"),
        [
            f"commonsense.llm_url={url}",
            f"commonsense.llm_model={model}",
            'task_manager.present_objects=["bowl_1", "mug_1"]',
            f"task_manager.report_dir={tmp_path}",
        ],
    )
    assert "situation_detector" in {n.name for n in profile.nodes}
    start_graph(profile)
    client = TaskClient()
    try:
        client.wait_until_ready(60)
        client.run_task("serve_water")
        # Situations from before the run are not the run's: replay once it executes.
        wait_until_executing(client, 60, tmp_path / "logs")
        replay = subprocess.run(
            [str(COWP), "replay", str(BAG), "--rate", "4"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert "published 2 message(s)" in replay.stdout
        assert "nobody" not in replay.stdout
        while not client.is_task_complete():
            pass
        result = client.get_result()
    finally:
        client.close()
    said = (
        f"{result.outcome}: {result.explanation}; done: {result.executed_steps}; "
        f"{replay.stdout}\n{node_log_trouble(tmp_path / 'logs')}"
    )
    assert result.handled_situations == ["the cup is dirty", "the fridge is white"], said
    assert result.outcome in {Outcome.COMPLETED, Outcome.NO_SOLUTION}
