"""The graph's small pieces: narrative lines, task names, outcomes, CLI errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.ros.clients.narrative import Narrator
from cowp_ros.ros.clients.task_client import Outcome
from cowp_ros.ros.nodes.task_manager import resolve_task

COWP = Path(sys.executable).with_name("cowp")


def feedback(phase: str, event: str, step_index: int = -1, plan_length: int = 0):
    return SimpleNamespace(
        phase=phase, last_event=event, step_index=step_index, plan=[None] * plan_length
    )


def test_narrator_marks_phases_counts_steps_and_skips_repeats() -> None:
    narrator = Narrator()
    assert narrator.line(feedback("planning", "planned: a, b")) == "  [ plan] planned: a, b"
    assert narrator.line(feedback("planning", "planned: a, b")) is None
    line = narrator.line(feedback("executing", "doing: find the cup", 0, 6))
    assert line == "  [   do 1/6] doing: find the cup"
    assert narrator.line(feedback("done", "completed")) == "  [  end] completed"


@pytest.mark.parametrize(
    ("text", "name"),
    [("serve water", "serve_water"), ("  Serve-Water ", "serve_water"), ("4", "fill_cup")],
)
def test_goal_text_resolves_to_a_registered_task(text: str, name: str) -> None:
    assert resolve_task(text).name == name


def test_empty_or_unknown_goal_is_a_clear_error() -> None:
    with pytest.raises(CowpError, match="names no task"):
        resolve_task("   ")
    with pytest.raises(CowpError, match=r"(?s)unknown task 'make_coffee'.*known tasks: fill_cup"):
        resolve_task("make coffee")


def test_unknown_outcome_text_counts_as_aborted() -> None:
    assert Outcome.parse("completed") is Outcome.COMPLETED
    assert Outcome.parse("exploded") is Outcome.ABORTED


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["demo", "--scenario", "no_such_scenario"], "unknown scenario 'no_such_scenario'"),
        (["replay", "/nonexistent/bag"], "no bag at /nonexistent/bag"),
    ],
)
def test_cli_bad_input_is_one_clear_line(arguments: list[str], message: str) -> None:
    result = subprocess.run(
        [str(COWP), *arguments], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
