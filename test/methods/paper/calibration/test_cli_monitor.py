"""`cowp monitor eval` on a tiny dataset with a scripted model: table, plot, JSON, --tune."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cowp_ros.cli import main
from cowp_ros.cli import monitor as monitor_cli
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.calibration.config import load_calibrations
from cowp_ros.methods.paper.calibration.situations import load_benign_situations


@pytest.fixture
def scripted(monkeypatch) -> ScriptedModel:
    """Blockers get a low P(yes), benign sentences a high one: separable by design."""
    model = ScriptedModel(
        yes_no=[
            (r"stop a robot.*(broken|dirty|no water|missing)", 0.85),
            (r"stop a robot", 0.15),
            (r"everything is as usual", 0.8),
            (r"if (the|there) .*(broken|dirty|no water|missing)", 0.2),
        ],
        default_yes_no=0.7,  # type: ignore[arg-type]
        name="scripted-cli",
    )

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(monitor_cli, "open_model", fake_open_model)
    return model


def test_eval_reports_recall_false_alarms_and_writes_plot_and_json(
    scripted: ScriptedModel, dataset_dir: Path, benign_file: Path, tmp_path: Path, capsys
) -> None:
    answers = tmp_path / "answers.json"
    code = main(
        ["monitor", "eval", "--split", "test", "--dataset-dir", str(dataset_dir),
         "--benign", str(benign_file), "--variant", "plain", "--variant", "prevents",
         "--plot-dir", str(tmp_path / "plots"), "--json", str(answers)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "model scripted-cli; split test" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("plain", "prev"))]
    assert [row[0] for row in rows] == ["plain", "prevents"]
    for row in rows:  # recall 100 %, false alarms 0 % on the separable scripted scores
        assert row[4:6] == ["100.0%", "0.0%"] and row[-1] == "yes"
    assert (tmp_path / "plots" / "monitor_scripted-cli_test.png").stat().st_size > 10_000
    record = json.loads(answers.read_text())
    test_keys = {item["key"] for item in record["items"]}
    asked = {question for question in scripted.questions()}
    assert any("is tall" in q or "book on the table" in q for q in asked)
    assert record["split"] == "test" and test_keys
    assert all(item["score"] is not None for item in record["items"])


def test_tune_writes_the_best_variant_for_the_model(
    scripted: ScriptedModel, dataset_dir: Path, benign_file: Path, tmp_path: Path, capsys
) -> None:
    config = tmp_path / "calibration.yaml"
    code = main(
        ["monitor", "eval", "--split", "dev", "--tune", "--config", str(config),
         "--dataset-dir", str(dataset_dir), "--benign", str(benign_file), "--no-plot",
         "--variant", "plain", "--variant", "plain-contrast", "--limit", "2"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "tuned: scripted-cli ->" in out
    entry = load_calibrations(config)["scripted-cli"]
    assert entry.variant.name in {"plain", "plain-contrast"}
    assert entry.tuned_on["meets_goal"] is True and entry.tuned_on["split"] == "dev"
    # The deployed entry is reported on the next evaluation.
    main(
        ["monitor", "eval", "--split", "test", "--config", str(config), "--no-plot",
         "--dataset-dir", str(dataset_dir), "--benign", str(benign_file), "--variant", "plain"]
    )  # fmt: skip
    assert "deployed (" in capsys.readouterr().out or entry.variant.name != "plain"


def test_tune_on_the_test_split_is_refused(dataset_dir: Path, capsys) -> None:
    code = main(["monitor", "eval", "--split", "test", "--tune", "--dataset-dir", str(dataset_dir)])
    assert code == 1
    assert "dev split only" in capsys.readouterr().err


def test_benign_export_is_what_the_bench_reads(tmp_path: Path, capsys) -> None:
    out = tmp_path / "distractors.yaml"
    assert (
        main(["monitor", "benign", "--split", "test", "--task", "pour_coke", "--out", str(out)])
        == 0
    )
    entries = yaml.safe_load(out.read_text())
    test = [i for i in load_benign_situations("test") if i.task == "pour_coke"]
    assert test and [e["text"] for e in entries] == [i.situation for i in test]
    assert {e["task"] for e in entries} == {"pour_coke"}
    assert main(["monitor", "benign", "--task", "make_coffee"]) == 1
