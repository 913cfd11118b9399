"""The measures: Wilson intervals, blocking handling, harmless changes, splits, oracle share."""

from __future__ import annotations

from typing import Any

import pytest

from cowp_ros.bench.results import (
    HOWS,
    aggregate,
    fmt_rate,
    markdown,
    paired_difference,
    rate,
    wilson,
)


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
        "design_effect": 1.0,
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
    assert summary["harmless_changed"] == {
        "k": 0, "n": 1, "pct": 0.0, "ci95": (0.0, 79.3), "design_effect": 1.0
    }  # fmt: skip


def test_intervals_are_clustered_by_trial() -> None:
    # 20 situations in 10 trials, two a trial, handled together or not at all: only 10
    # independent outcomes, so the interval is that of 5/10, not of 10/20
    together = [(2, 2)] * 5 + [(0, 2)] * 5
    clustered = rate(10, 20, together)
    assert clustered["design_effect"] == pytest.approx(2.0, rel=0.15)
    assert clustered["ci95"][0] < wilson(10, 20)[0] and clustered["ci95"][1] > wilson(10, 20)[1]
    # one situation a trial: Wilson's interval exactly
    assert rate(5, 10, [(1, 1)] * 5 + [(0, 1)] * 5)["ci95"] == wilson(5, 10)
    # independent within trials: no wider than Wilson's
    mixed = [(1, 2)] * 10
    assert rate(10, 20, mixed)["ci95"] == wilson(10, 20)


def test_a_paired_difference_is_clustered_by_trial() -> None:
    same = paired_difference([(1, 1, 1)] * 10)
    assert same == {"points": 0.0, "ci95": (0.0, 0.0), "n": 10, "trials": 10}
    better = paired_difference([(1, 0, 1)] * 4 + [(0, 0, 1)] * 6)
    assert better is not None and better["points"] == 40.0
    low, high = better["ci95"]
    assert 0 < low < 40 < high < 80
    assert paired_difference([]) is None


def v3_situation(handled: bool, how: str = "", **kw: Any) -> dict[str, Any]:
    return situation(True, True, handled, **kw) | {
        "how": how, "harm": kw.get("harm", "visible"),
        "gave_up_rightly": kw.get("gave_up_rightly", False),
        "alternative_present": kw.get("alternative_present", True),
    }  # fmt: skip


def test_handling_by_how_silent_harms_apart_and_beyond_the_better_control() -> None:
    trials = [
        # (method, trial) -> situations
        ("oracle", 0, True, [v3_situation(True, "same_kind")]),
        ("oracle", 1, True, [v3_situation(True, "stand_in", harm="silent")]),
        ("oracle", 2, False, [v3_situation(False, unsolvable="beyond_skills",
                                           gave_up_rightly=True)]),
        ("oracle", 3, False, [v3_situation(False, alternative_present=False)]),
        ("retry", 0, True, [v3_situation(True, "same_kind")]),
        ("retry", 1, False, [v3_situation(False, harm="silent")]),
        ("retry", 2, False, [v3_situation(False, unsolvable="beyond_skills")]),
        ("retry", 3, False, [v3_situation(False, alternative_present=False)]),
        ("same_kind", 0, False, [v3_situation(False)]),
        ("same_kind", 1, False, [v3_situation(False, harm="silent")]),
        ("same_kind", 2, False, [v3_situation(False, unsolvable="beyond_skills")]),
        ("same_kind", 3, False, [v3_situation(False, alternative_present=False)]),
    ]  # fmt: skip
    records = [record(m, "pour_coke", done, sits, i) for m, i, done, sits in trials]
    result = aggregate(records, ["oracle", "retry", "same_kind"], {}, {"test": ["pour_coke"]})
    oracle = result["methods"]["oracle"]["scopes"]["test"]
    assert {h: oracle["handled_how"][h]["k"] for h in HOWS} == {
        "same_kind": 1, "stand_in": 1, "plan_change": 0
    }  # fmt: skip
    assert (oracle["gave_up_rightly"]["k"], oracle["gave_up_rightly"]["n"]) == (1, 1)
    assert (oracle["handling_silent"]["k"], oracle["handling_silent"]["n"]) == (1, 1)
    assert (oracle["handling_visible"]["k"], oracle["handling_visible"]["n"]) == (1, 3)
    # where an acceptable object was present and the situation is solvable: 2 of 2
    assert oracle["handling_with_alternative"]["pct"] == 100.0
    assert oracle["blocking_without_alternative"] == 1
    beyond = oracle["beyond_control"]
    assert beyond["control"] == "retry" and beyond["points"] == 25.0  # 2/4 against 1/4
    # a control is read beyond the best of the other controls, never against itself
    retry = result["methods"]["retry"]["scopes"]["test"]["beyond_control"]
    assert retry["control"] == "same_kind" and retry["points"] == 25.0  # 1/4 against 0/4
    assert oracle["handling_visible_unfailed"] is None  # records from before it was kept
    table = markdown(result, "# header")
    assert "| ORACLE | 50 [" not in table  # labels come from the caller: none given here
    assert "| oracle | 50 [15, 85] (2/4) | 1 | 1 | 0 | 100 [" in table
    assert "+25 [" in table and "vs retry" in table
    assert any(
        "no acceptable object among the present half" in k for k in result["oracle_failures"]
    )


def test_each_oracle_miss_with_an_acceptable_object_present_has_a_reason() -> None:
    no_plan = record("oracle", "plate_to_sink", False, [v3_situation(False)], 0)
    no_plan["situations"][0] |= {"text": "the plate is broken.", "action": "grasp_plate",
                                 "alternatives": ["plate_3"]}  # fmt: skip
    no_plan["episode"]["gave_up"] = "oracle: no plan reaches the goal (unusable: plate_1)"
    beside = record("oracle", "plate_to_sink", False, [
        v3_situation(False) | {"text": "a.", "action": "walk"},
        v3_situation(False, alternative_present=False) | {"text": "b.", "action": "walk"},
    ], 1)  # fmt: skip
    alone = record("oracle", "plate_to_sink", False, [
        v3_situation(False, alternative_present=False) | {"text": "c.", "action": "walk"}
    ], 2)  # fmt: skip
    result = aggregate([no_plan, beside, alone], ["oracle"], {}, {"test": ["plate_to_sink"]})
    assert [(m["trial"], m["situation"]) for m in result["oracle_misses"]] == [
        ("plate_to_sink-0000", "the plate is broken."),
        ("plate_to_sink-0001", "a."),
    ]
    assert result["oracle_misses"][0]["reason"].startswith("no plan over the objects present")
    assert "had no acceptable object" in result["oracle_misses"][1]["reason"]
    assert "(present: plate_3): no plan" in markdown(result, "# h")


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("embedded:qwen2.5-coder-1.5b", False),
        ("", False),  # a run without a model
        ("text-davinci-003", True),
    ],
)
def test_the_papers_column_stands_only_beside_the_papers_model(model: str, shown: bool) -> None:
    records = [record("cw", "pour_coke", True, []), record("cowp", "pour_coke", True, [])]
    result = aggregate(records, ["cw", "cowp"], {"cw": "CW"}, {"test": ["pour_coke"]})
    result["settings"] = {"model": model}
    table = markdown(result, "# header")
    assert ("paper (completion / handling)" in table) is shown
    assert "| CW | 1 | 100 [20.7, 100] | 100 (1) |" in table
    assert ("67.8 / 36.9" in table) is shown  # the paper's COWP
    if not shown:
        why = f"{model}, is not the paper's GPT-3" if model else "asked no language model"
        assert why in table.splitlines()[2]


def test_situations_passed_by_as_moot_are_counted_and_said() -> None:
    moot = v3_situation(True, "same_kind", key="4/1") | {"fired": False, "passed": True}
    records = [
        record("oracle", "pour_coke", True, [v3_situation(True, "same_kind"), moot]),
        record("same_kind", "pour_coke", True, [v3_situation(True, "same_kind")], 1),
    ]
    result = aggregate(records, ["oracle", "same_kind"], {}, {"test": ["pour_coke"]})
    oracle = result["methods"]["oracle"]["overall"]
    assert oracle["blocking_passed"] == 1 and oracle["blocking_raised"] == 1
    assert result["methods"]["same_kind"]["overall"]["blocking_passed"] == 0
    table = markdown(result, "# header")
    assert "oracle: 1 blocking situation(s) passed by as moot" in table
    assert "same_kind: 1 blocking" not in table


def test_visible_harms_handled_only_after_a_step_failed_on_them_are_counted_apart() -> None:
    def seen(handled: bool, ran_into: bool, **kw: Any) -> dict[str, Any]:
        return v3_situation(handled, "same_kind" if handled else "", **kw) | {"ran_into": ran_into}

    trials = [
        ("oracle", 0, True, [seen(True, False)]),
        ("oracle", 1, True, [seen(True, False, harm="silent")]),
        ("retry", 0, True, [seen(True, True)]),
        ("retry", 1, False, [seen(False, False, harm="silent")]),
    ]
    records = [record(m, "pour_coke", done, sits, i) for m, i, done, sits in trials]
    result = aggregate(records, ["oracle", "retry"], {}, {"test": ["pour_coke"]})
    oracle = result["methods"]["oracle"]["scopes"]["test"]
    retry = result["methods"]["retry"]["scopes"]["test"]
    assert (retry["handling_visible"]["k"], retry["handling_visible"]["n"]) == (1, 1)
    assert (retry["handling_visible_unfailed"]["k"], retry["handling_visible_unfailed"]["n"]) == (
        0,
        1,
    )
    assert oracle["handling_visible_unfailed"]["k"] == 1
    table = markdown(result, "# header")
    assert "visible harms handled with no step failed on them %" in table
    assert "| retry | 50 [" in table and "| 100 [" in table and "| 0 [" in table
