"""The measures: Wilson intervals, blocking handling, harmless changes, splits, oracle share."""

from __future__ import annotations

from typing import Any

import pytest

from cowp_ros.bench.results import aggregate, fmt_rate, markdown, wilson


def test_wilson_intervals_match_the_textbook() -> None:
    assert wilson(0, 10) == (0.0, 27.8)
    assert wilson(5, 10) == (23.7, 76.3)
    assert wilson(10, 10) == (72.2, 100.0)
    assert wilson(81, 100) == (72.2, 87.5)
    assert wilson(0, 0) is None
    assert (
        fmt_rate({"k": 5, "n": 10, "pct": 50.0, "ci95": (23.7, 76.3)}) == "50 [23.7, 76.3] (5/10)"
    )


def situation(blocking: bool, fired: bool, handled: bool, **kw: Any) -> dict[str, Any]:
    return {"key": kw.get("key", "4/0"), "object": "cup", "blocking": blocking, "fired": fired,
            "handled": handled, "changed": kw.get("changed", False), "rule": "r",
            "effect": "disables", "unsolvable": kw.get("unsolvable", "")}  # fmt: skip


def record(
    method: str, task: str, completed: bool, situations: list, index: int = 0, **kw: Any
) -> dict[str, Any]:
    return {
        "method": method, "task": task, "index": index, "completed": completed,
        "situations": situations, "distractors": kw.get("distractors", []), "error": "",
        "seconds": 1.0, "usage": {"calls": kw.get("calls", 0), "cache_hits": 0,
                                  "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0},
        "episode": {"harmful": [], "judgements": []},
    }  # fmt: skip


def test_handling_counts_blocking_situations_only_and_is_compared_with_the_oracle() -> None:
    beyond = situation(True, True, False, unsolvable="beyond_skills")
    changing = situation(False, True, False, changed=True)
    records = [
        # a trial with a blocking situation the oracle handles and CW does not
        record("oracle", "fill_cup", True, [situation(True, True, True)]),
        record("cw", "fill_cup", False, [situation(True, True, False)]),
        # a harmless one: completing it is no "handling"; CW changing nothing is right
        record("oracle", "pour_coke", True, [situation(False, True, False)], 1),
        record("cw", "pour_coke", True, [situation(False, True, False)], 1),
        # an unsolvable one: left out of the solvable-trials measure
        record("oracle", "pour_coke", False, [beyond], 2),
        record("cw", "pour_coke", False, [beyond], 2),
        # a method changed by a harmless distractor, in a test task
        record("cowp", "pour_coke", True, [changing], 1, calls=4),
    ]  # fmt: skip
    result = aggregate(
        records,
        ["oracle", "cw", "cowp"],
        {"cw": "CW"},
        {"dev": ["fill_cup"], "test": ["pour_coke"]},
    )
    oracle, cw, cowp = (result["methods"][m]["scopes"] for m in ("oracle", "cw", "cowp"))
    assert oracle["all"]["handling"]["k"] == 1 and oracle["all"]["handling"]["n"] == 2
    assert oracle["all"]["handling_solvable"] == {
        "k": 1,
        "n": 1,
        "pct": 100.0,
        "ci95": (20.7, 100.0),
    }
    assert cw["all"]["handling"]["pct"] == 0.0 and cw["all"]["handling_share_of_oracle"] == 0.0
    assert oracle["all"]["handling_share_of_oracle"] == 100.0
    assert set(oracle) == {"all", "dev", "test"} and oracle["test"]["trials"] == 2
    assert cowp["test"]["harmless_changed"]["k"] == 1 and cowp["test"]["harmless_changed"]["n"] == 1
    assert cw["all"]["harmless_changed"]["k"] == 0
    assert cowp["all"]["questions_per_handled"] is None and cowp["all"]["llm_questions"] == 4
    table = markdown(result, "# header")
    assert table.index("### Test tasks: pour_coke") < table.index("### Dev tasks")
    assert "| CW | 2 | 50 [9.5, 90.5] |" in table  # the test tasks' row


@pytest.mark.parametrize("scope", ["all", "test"])
def test_situation_free_completion_needs_trials_without_any_event(scope: str) -> None:
    records = [
        record("cw", "pour_coke", True, []),
        record("cw", "pour_coke", True, [], 1, distractors=[{"fired": True, "changed": False}]),
    ]
    summary = aggregate(records, ["cw"], {}, {"test": ["pour_coke"]})["methods"]["cw"]["scopes"][
        scope
    ]
    assert summary["completion_without_situation"]["n"] == 1
    assert summary["harmless_changed"] == {"k": 0, "n": 1, "pct": 0.0, "ci95": (0.0, 79.3)}
