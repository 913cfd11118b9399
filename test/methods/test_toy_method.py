"""A method of one's own (`toy_method.py`: one module, one registration) runs through
`cowp run` and `cowp bench` with nothing else changed; the ROS graph's run is in
`test/graph/test_toy_method_graph.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.errors import CowpError
from cowp_ros.methods import registry
from cowp_ros.methods.registry import METHODS_ENV

HERE = Path(__file__).resolve().parent
RUN_CLI = "import sys; from cowp_ros.cli import main; sys.exit(main())"


def cowp(*arguments: str) -> list[str]:
    script = Path(sys.executable).with_name("cowp")
    command = [str(script)] if script.is_file() else [sys.executable, "-c", RUN_CLI]
    return [*command, *arguments]


def toy_environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[METHODS_ENV] = "toy_method"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    env["COWP_REPORTS_DIR"] = str(tmp_path / "reports")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # no cached answers of other runs
    return env


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    # Only a mug may stand in for the cup.
    with ScriptedLLMServer(SensibleModel(no=[r"can an? (?!mug\b)\w+ be used instead"])) as running:
        yield running


def test_cowp_run_runs_a_method_registered_outside_the_package(
    tmp_path: Path, server: ScriptedLLMServer
) -> None:
    done = subprocess.run(
        cowp("run", "fill_cup", "--method", "toy", "--situation", "the cup is dirty",
             "--at", "find_cup", "--llm-url", server.url, "--llm-model", "scripted"),
        capture_output=True, text=True, timeout=300, env=toy_environment(tmp_path), check=False,
    )  # fmt: skip
    story = done.stdout + done.stderr
    assert done.returncode == 0, story
    assert "method: toy" in story
    report = json.loads(next((tmp_path / "reports").glob("*.json")).read_text())
    assert report["outcome"] == "completed"
    # The toy monitor asked no question; the stand-in was asked about.
    kinds = [event["kind"] for event in report["events"]]
    assert "monitor" not in kinds and "acquirer" in kinds, kinds
    assert report["explanation"] == "used a mug instead of the cup: the cup is dirty"


def test_cowp_bench_runs_a_method_registered_outside_the_package(
    tmp_path: Path, server: ScriptedLLMServer
) -> None:
    out = tmp_path / "bench"
    done = subprocess.run(
        cowp("bench", "--methods", "toy", "--tasks", "fill_cup", "--trials", "2", "--jobs", "1",
             "--out", str(out), "--llm-url", server.url, "--llm-model", "scripted"),
        capture_output=True, text=True, timeout=600, env=toy_environment(tmp_path), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    files = sorted((out / "trials" / "toy").glob("fill_cup-*.json"))
    records = [json.loads(path.read_text()) for path in files]
    assert len(records) == 2
    assert all(record["trace"] for record in records)  # the loop's narrative, per trial


def test_an_unknown_method_or_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CowpError, match="unknown method 'nope'") as raised:
        registry.get_method("nope")
    assert "grounded" in (raised.value.hint or "")
    monkeypatch.setenv(METHODS_ENV, "no_such_module_anywhere")
    with pytest.raises(CowpError, match="cannot import method module 'no_such_module_anywhere'"):
        registry.method_names()


@pytest.mark.parametrize("command", ["run", "demo"])
def test_a_method_module_that_fails_to_import_is_an_error_not_a_traceback(
    tmp_path: Path, command: str
) -> None:
    env = toy_environment(tmp_path)
    env[METHODS_ENV] = "no_such_module_anywhere"
    arguments = ["fill_cup", "--quiet"] if command == "run" else ["--out", str(tmp_path / "d")]
    done = subprocess.run(
        cowp(command, *arguments), capture_output=True, text=True, timeout=120, env=env,
        check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert "cannot import method module 'no_such_module_anywhere'" in done.stderr
    assert "PYTHONPATH" in done.stderr  # what to do about it
    if command == "run":  # the run's report is written whatever the outcome
        report = json.loads(next((tmp_path / "reports").glob("*.json")).read_text())
        assert report["outcome"] == "error"


def test_two_methods_of_one_name_are_refused() -> None:
    paper = registry.get_method("cowp")
    with pytest.raises(CowpError, match="two methods are named 'cowp'"):
        registry.register(
            registry.MethodEntry("cowp", "X", "x", loop=paper.loop, reasoners=paper.reasoners)
        )
