"""The share of the fault-injection campaign that runs in CI (the full one: `cowp chaos
run --seed 0 --runs 120`). One run each of the kinds that found defects before: NaN and
absurd log-probabilities, a 10 MB answer, Retry-After beyond the timeout, hostile text,
a server killed mid-run, and Ctrl-C or SIGTERM to a plan mid-search."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.chaos.campaign import Planned, run_one, schedule
from cowp_ros.cli import main

SMOKE = ["logprobs_nan", "huge_answer", "rate_limited", "hostile_text", "interrupted_plan"]


@pytest.mark.parametrize("kind", SMOKE)
def test_a_run_keeps_every_invariant(kind: str, tmp_path: Path) -> None:
    run = run_one(Planned(1, kind, f"0:1:{kind}"), tmp_path)
    broken = {c.name: c.detail for c in run.checks if not c.ok}
    assert not broken, f"{kind} ({run.note}): {broken}"
    assert run.faults_fired is None or run.faults_fired > 0, "the fault never reached the run"


def test_the_schedule_is_a_function_of_the_seed() -> None:
    names = ["a", "b", "c"]
    first = schedule(7, 10, names)
    assert first == schedule(7, 10, names) and first != schedule(8, 10, names)
    assert [p.kind for p in first[:3]] and sorted(p.kind for p in first[:3]) == names
    assert {p.kind for p in first} == set(names)


@pytest.mark.parametrize("seed", [0, 1, 23])
def test_a_campaign_of_as_many_runs_as_kinds_runs_every_kind(seed: int) -> None:
    """Stratified: a 25-run campaign had left 9 of 34 kinds unexercised; one of as many
    runs as kinds runs each once, and a shorter one gives each family its share."""
    from collections import Counter

    from cowp_ros.chaos.campaign import REGISTRY

    names = list(REGISTRY)
    planned = schedule(seed, len(names), names)
    assert sorted(p.kind for p in planned) == sorted(names)
    families = Counter(REGISTRY[name].family for name in names)
    short = Counter(REGISTRY[p.kind].family for p in schedule(seed, 25, names))
    for family, count in families.items():
        share = 25 * count / len(names)
        assert abs(short[family] - share) <= 1.5, (family, short[family], share)


def test_the_command_runs_one_seeded_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative --out, as people type it
    code = main(
        ["chaos", "run", "--seed", "0", "--runs", "2", "--kinds", "interrupted_run",
         "--out", "out", "--only", "1"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "| interrupted_run | cli | 1 | 1 |" in out
    assert (tmp_path / "out" / "summary.json").is_file()


@pytest.mark.ros
@pytest.mark.slow
def test_a_graph_run_keeps_every_invariant(tmp_path: Path) -> None:
    """One graph fault for real (the sim nodes as processes, a node killed mid-task):
    the graph family's runner cannot rot while the graph tests pass."""
    run = run_one(Planned(1, "node_killed", "0:1:node_killed"), tmp_path)
    broken = {c.name: c.detail for c in run.checks if not c.ok}
    assert not broken, f"node_killed ({run.note}): {broken}"
    assert run.observed["result_arrived"] == 1.0 and run.outcome == "aborted"
