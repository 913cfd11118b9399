"""`cowp bringup` as a user runs it: start, ready, Ctrl-C, and a node that dies."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

COWP = Path(sys.executable).with_name("cowp")


def start_bringup(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(COWP), "bringup", "--profile", "sim", "--log-dir", str(tmp_path), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def read_until(process: subprocess.Popen[str], marker: str, timeout_s: float) -> str:
    assert process.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout_s
    for line in process.stdout:
        seen.append(line)
        if marker in line or time.monotonic() > deadline:
            break
    return "".join(seen)


@pytest.mark.llm
def test_sim_profile_comes_up_and_stops_on_ctrl_c(tmp_path: Path, local_llm) -> None:
    url, model = local_llm
    process = start_bringup(
        tmp_path, "--set", f"commonsense.llm_url={url}", "--set", f"commonsense.llm_model={model}"
    )
    try:
        output = read_until(process, "all nodes ready", 120)
        assert "all nodes ready" in output, output
        for node in ("sim_world", "planner", "commonsense", "executor", "task_manager"):
            assert f"started {node}" in output and (tmp_path / f"{node}.log").exists()
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, rest
    assert "stopped: sim_world (0)" in rest or "stopped: sim_world" in rest


def test_a_node_that_dies_at_start_is_reported_with_its_reason(tmp_path: Path) -> None:
    process = start_bringup(tmp_path, "--set", "sim_world.start_location=the_moon")
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 1, output
    assert "node 'sim_world' died with exit code 1" in output
    assert "start_location 'the_moon' is not a location" in output
    assert "Traceback" not in output.split("died with")[0]


def test_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(COWP), "bringup", "--profile", "moon"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "unknown profile 'moon'" in result.stderr and "Traceback" not in result.stderr
