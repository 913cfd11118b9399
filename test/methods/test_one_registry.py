"""One registry, one composition: the related methods are entries like the paper's and
the grounded method, `cowp run`'s alias flags map onto them, a method's own options
reach it through the registry, and the graph refuses what it cannot run, saying why."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from cowp_ros.cli import main
from cowp_ros.cli import run as run_cli
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.method import THRESHOLD
from cowp_ros.methods.registry import build_loop, get_method, graph_method, method_names
from cowp_ros.ros.clients.peer_method import known_method
from cowp_ros.tasks import get_task


def run_offline(
    monkeypatch: pytest.MonkeyPatch, model: ScriptedModel, report: Path, *args: str
) -> int:
    @contextlib.contextmanager
    def scripted(_args: object):
        yield model

    monkeypatch.setattr(run_cli, "open_model", scripted)
    return main(["run", *args, "--report", str(report)])


def timeless(value: object) -> object:
    """`value` without its times (what two runs of one input do not share)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in ("at_s", "seconds")}
    if isinstance(value, list):
        return [timeless(item) for item in value]
    return re.sub(r"\[\d+(?:\.\d+)? s\]", "[t]", value) if isinstance(value, str) else value


def events_of(report: Path) -> object:
    """The report's events, their times aside."""
    return timeless(json.loads(report.read_text())["events"])


def test_the_planner_alias_runs_the_registered_guided_method(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    by_alias, by_name = tmp_path / "alias.json", tmp_path / "name.json"
    alias = ["battery", "--method", "cowp", "--planner", "llm_guided", "--beam", "2"]
    # the alias's search falls back on pyperplan; the method's on the run's --planner
    name = ["battery", "--method", "cowp_llm_guided", "--beam", "2", "--planner", "pyperplan"]
    for report, args in ((by_alias, alias), (by_name, name)):
        model = ScriptedModel(completions=[("Possible next actions", "1")])
        assert run_offline(monkeypatch, model, report, *args) == 0
        assert model.usage.calls > 0  # the guide was asked
    assert events_of(by_alias) == events_of(by_name)
    assert json.loads(by_name.read_text())["planner"] == "llm_guided+pyperplan"


def test_dkprompt_by_name_asks_the_text_model_about_the_situation_it_saw(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedModel(default_yes_no=True)
    report = tmp_path / "run.json"
    code = run_offline(
        monkeypatch, model, report, "fill_cup", "--method", "dkprompt",
        "--situation", "the cup is dirty", "--at", "hold_cup",
    )  # fmt: skip
    assert code == 0, capsys.readouterr().out
    assert any(q.startswith("The robot sees: the cup is dirty.") for q in model.questions())
    assert json.loads(report.read_text())["outcome"] == "completed"


def test_a_methods_own_options_reach_it_through_the_registry() -> None:
    spec = get_task("fill_cup")
    default = build_loop("cowp", spec, ScriptedModel())
    stricter = build_loop("cowp", spec, ScriptedModel(), options={THRESHOLD: 0.9})
    assert default.monitor.threshold == 0.5  # type: ignore[attr-defined]
    assert stricter.monitor.threshold == 0.9  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["dkprompt", "cowp_llm_state", "cowp_llm_guided"])
def test_the_graph_refuses_a_method_that_asks_its_model_inside_the_loop(name: str) -> None:
    why = get_method(name).off_graph
    assert "no model" in why
    with pytest.raises(CowpError, match=f"method '{name}' cannot run on the ROS graph"):
        graph_method(name)
    refused = known_method(name)  # the commonsense node's `method` parameter check
    assert refused is not None and why in refused
    assert known_method("grounded") is None and known_method("cowp") is None


def test_every_method_the_graph_runs_is_one_cowp_run_runs() -> None:
    on_graph = [name for name in method_names() if not get_method(name).off_graph]
    assert {"grounded", "cowp"} <= set(on_graph)
    for name in on_graph:
        assert graph_method(name) is get_method(name)


def test_cowp_demo_refuses_a_method_the_graph_cannot_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--method", "cowp_llm_state"]) == 1
    err = capsys.readouterr().err
    assert "cannot run on the ROS graph" in err and "cowp run --method cowp_llm_state" in err
