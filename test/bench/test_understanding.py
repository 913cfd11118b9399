"""The balanced and per-situation scores: hard situations weigh at least half."""

from __future__ import annotations

from typing import Any

import pytest

from cowp_ros.bench.understanding import (
    APART,
    balanced_rows,
    hard_weight,
    situation_class,
    understanding,
)


def blocking(key: str, handled: bool, **fields: Any) -> dict[str, Any]:
    entry = {
        "key": key, "blocking": True, "handled": handled, "gave_up_rightly": False,
        "harm": "visible", "unsolvable": "", "alternative_present": True,
        "effect": "disables", "targets": ["cup_1"], "alternatives": ["cup_2"],
    }  # fmt: skip
    return entry | fields


SILENT = {"harm": "silent"}
CROSS = {"alternatives": ["bowl_1"]}
NONE_PRESENT = {"alternative_present": False, "alternatives": []}


def test_each_blocking_situation_falls_in_the_first_class_that_fits() -> None:
    assert situation_class(blocking("a", True)) == "same_kind"
    assert situation_class(blocking("a", True, **CROSS)) == "cross_kind"
    assert situation_class(blocking("a", True, **SILENT, **CROSS)) == "silent"
    assert situation_class(blocking("a", False, unsolvable="beyond_skills")) == "no_solution"
    assert situation_class(blocking("a", False, **NONE_PRESENT)) == APART
    assert situation_class(blocking("a", True, effect="beyond_skills", alternatives=[])) == "other"


def test_hard_situations_are_weighed_up_to_half_never_down() -> None:
    assert hard_weight(1, 3) == 3.0
    assert hard_weight(3, 1) == 1.0 and hard_weight(0, 5) == 1.0


def test_the_balanced_and_per_situation_scores() -> None:
    records = [
        {"task": "t", "situations": [blocking("s", True, **SILENT), blocking("k", True)]},
        {"task": "t", "situations": [blocking("k", False), blocking("k", True)]},
        {"task": "t", "situations": [blocking("n", False, **NONE_PRESENT)]},
        {"task": "t", "situations": [{"key": "h", "blocking": False}]},
    ]
    found = understanding(records)
    assert found["classes"]["silent"] == {"k": 1, "n": 1}
    assert found["classes"]["same_kind"] == {"k": 2, "n": 3}
    assert found["classes"][APART] == {"k": 0, "n": 1}  # counted apart, scored nowhere
    assert found["hard_share"] == 0.25 and found["hard_weight"] == 3.0
    # (3 x 1 silent handled + 2 of 3 same kind) / (3 x 1 + 3)
    assert found["balanced"]["pct"] == pytest.approx(83.3)
    low, high = found["balanced"]["ci95"]
    assert low <= 83.3 <= high
    # each distinct situation once: silent 1/1, the cup 2/3
    assert found["per_situation"] == {"pct": pytest.approx(83.3), "situations": 2}
    assert understanding(records) == found  # the bootstrap's seed is fixed


def test_a_rightly_given_up_unsolvable_situation_is_a_success() -> None:
    gave_up = blocking("u", False, unsolvable="no_stand_in", gave_up_rightly=True)
    found = understanding([{"task": "t", "situations": [gave_up, blocking("k", False)]}])
    assert found["classes"]["no_solution"] == {"k": 1, "n": 1}
    assert found["balanced"]["pct"] == 50.0


def test_the_table_row_reads_the_figures() -> None:
    records = [
        {"task": "t", "situations": [blocking("s", True, **SILENT)]},
        {"task": "t", "situations": [blocking("k", False)]},
    ]
    methods = {"m": {"label": "M", "scopes": {"test": {"understanding": understanding(records)}}}}
    rows = balanced_rows(methods, "test")
    assert rows[2].startswith("| M | 1/1 | 0/0 | 0/0 | 0/1 | 0/0 | 50 % | 50 [")
    assert rows[2].endswith("| 50 (2) | 0 |")
