"""The workspace works the way the README promises: no sourcing, doctor green, idempotent setup."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def clean_env() -> dict[str, str]:
    """The environment of a fresh shell: no ROS setup sourced, no library path.

    `_ROS_WHEELS_BOOTSTRAP_COMPLETE` goes too: it is the guard of the wheels' .pth
    bootstrapper, which sets LD_LIBRARY_PATH and re-executes Python once; a fresh shell
    does not have it.
    """
    prefixes = ("AMENT_", "COLCON_", "LD_LIBRARY", "_ROS_WHEELS_BOOTSTRAP")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.pop("PYTHONPATH", None)
    return env


def test_rclpy_and_interfaces_import_without_sourcing() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import rclpy, cowp_interfaces.action, cowp_interfaces.srv, cowp_interfaces.msg",
        ],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.ros
def test_cowp_doctor_is_green() -> None:
    result = subprocess.run(
        [str(VENV_BIN / "cowp"), "doctor"],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[ok  ] DDS pub/sub across two processes" in result.stdout
    assert "[FAIL]" not in result.stdout


def test_cowp_help_lists_doctor() -> None:
    result = subprocess.run(
        [str(VENV_BIN / "cowp"), "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "doctor" in result.stdout


def test_cowp_without_a_command_prints_usage_and_fails() -> None:
    result = subprocess.run([str(VENV_BIN / "cowp")], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "usage: cowp" in result.stdout


def test_second_setup_run_changes_nothing() -> None:
    """Every step finds its stamp: the setup run before this test left nothing to do."""
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup.sh")],
        env={**clean_env(), "VENV": str(VENV_BIN.parent)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    steps = [line for line in result.stdout.splitlines() if ": " in line and "ready:" not in line]
    assert steps, result.stdout
    assert all(line.endswith("up to date") or "skipped" in line for line in steps), result.stdout
