"""bench_grounded_thresholds.py --propose: a model's entry of config/grounded.yaml chosen
from its dev scores, here from the kept run of the embedded model (no model asked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from cowp_ros.methods.grounded.settings import GroundedSettings

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks/bench_grounded_thresholds.py"
KEPT = REPO / "benchmarks/results/grounded_thresholds"
MODEL = "qwen2.5-coder-1.5b"


def bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_kept_dev_scores_propose_the_shipped_entry() -> None:
    done = bench("--from-json", str(KEPT / "dev.json"), "--propose", "--llm-model", MODEL)
    assert done.returncode == 0, done.stderr[-2000:]
    entry_text = done.stdout.split("entry for config/grounded.yaml (under models:):\n")[1]
    proposed = GroundedSettings.parse(MODEL, yaml.safe_load(entry_text)[MODEL], "stdout")
    shipped = GroundedSettings.for_model(MODEL)
    for name in ("use_threshold", "dirty_threshold", "need_threshold"):
        assert abs(getattr(proposed, name) - getattr(shipped, name)) < 0.01, name
    # The world threshold: 0.08 above the highest harmless dev world item (1.317); the
    # shipped 1.5 sits above it too, and the two stop the same dev items (none).
    assert 1.39 < proposed.world_threshold < shipped.world_threshold
    assert (proposed.role_threshold, proposed.max_candidates, proposed.min_similarity) == (
        shipped.role_threshold,
        shipped.max_candidates,
        shipped.min_similarity,
    )


def test_thresholds_are_never_proposed_from_test_items() -> None:
    done = bench("--from-json", str(KEPT / "test.json"), "--propose", "--llm-model", MODEL)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "holds test items; thresholds are chosen on the dev tasks only" in done.stderr
    live = bench("--split", "test", "--propose")
    assert live.returncode == 2 and "chosen on the dev tasks only" in live.stderr


def test_a_kept_file_that_names_no_model_needs_one() -> None:
    done = bench("--from-json", str(KEPT / "dev.json"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "does not say which model scored its items" in done.stderr
    assert "--llm-model" in done.stderr


def test_a_file_of_something_else_is_refused_clearly(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"items": [{"sentence": "the cup is dirty"}]}')
    done = bench("--from-json", str(other), "--llm-model", MODEL)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "is not a file bench_grounded_thresholds.py --json wrote" in done.stderr


def test_a_rerun_from_its_own_file_needs_no_model_name(tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    first = bench("--from-json", str(KEPT / "dev.json"), "--llm-model", MODEL, "--json", str(again))
    assert first.returncode == 0, first.stderr[-2000:]
    second = bench("--from-json", str(again), "--propose")
    assert second.returncode == 0, second.stderr[-2000:]
    assert f'"model": "{MODEL}"' in second.stdout and '"split": "dev"' in second.stdout


def test_no_proposal_within_the_margin_is_said_and_the_scores_are_kept(tmp_path: Path) -> None:
    kept = tmp_path / "scores.json"
    done = bench(
        "--from-json", str(KEPT / "dev.json"), "--propose", "--llm-model", MODEL,
        "--margin", "0.6", "--json", str(kept),
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no thresholds keep 0.6 from every item they decide" in done.stderr
    assert "lower --margin" in done.stderr
    assert "entry for config/grounded.yaml" not in done.stdout
    assert len(json.loads(kept.read_text())["items"]) == 145
