"""bench_decision_time's figures: with a few dozen decisions the p95 is nearly the max,
so the share within the target is printed with its interval beside it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_decision_time import TARGETS, spread  # noqa: E402


def test_the_share_within_the_target_comes_with_its_interval() -> None:
    times = [1.0, 1.2, 1.3, 1.4, 1.6]
    line = spread(times, TARGETS["harmless"])
    assert (line["n"], line["p50"], line["p95"], line["max"]) == (5, 1.3, 1.6, 1.6)
    assert line["within_target"] == "4/5"
    low, high = line["within_target_interval_pct"]
    assert low == pytest.approx(37.6, abs=0.1) and high == pytest.approx(96.4, abs=0.1)


def test_every_decision_within_the_target_still_leaves_doubt_over_few() -> None:
    line = spread([0.9, 1.0, 1.1, 1.2], TARGETS["harmless"])
    assert line["within_target"] == "4/4"
    low, high = line["within_target_interval_pct"]
    assert high == 100.0 and low < 60.0  # four decisions cannot show 95 % within it


def test_no_decision_no_figures() -> None:
    assert spread([], TARGETS["blocking"]) == {}
