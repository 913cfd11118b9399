"""The dev near misses the grounded thresholds are chosen on: each names a dev task and a
step of that task's closed-world plan (a typo would silently drop it from the dev items),
and none is a sentence of the test tasks' near misses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cowp_ros.cli.bench import read_distractors
from cowp_ros.tasks import split_tasks

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_grounded_thresholds import NEAR_MISSES, near_miss_items  # noqa: E402


def test_every_dev_near_miss_is_asked_at_a_step_of_its_dev_task() -> None:
    written = read_distractors(str(NEAR_MISSES["dev"]))
    dev = split_tasks()["dev"]
    assert written and all(d.task in dev for d in written)
    asked = [item for task in dev for item in near_miss_items(task, NEAR_MISSES["dev"])]
    assert len(asked) == len(written)
    assert all(not item.blocking and item.kind == "near_miss" for item in asked)


def test_the_dev_near_misses_share_no_sentence_with_the_test_ones() -> None:
    dev = {d.text for d in read_distractors(str(NEAR_MISSES["dev"]))}
    test_file = NEAR_MISSES["test"]
    if not test_file.is_file():
        pytest.skip(f"no {test_file} (../shared beside the checkout, as in CI)")
    assert not dev & {d.text for d in read_distractors(str(test_file))}
