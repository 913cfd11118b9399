"""bench_question_views.py's reading of the scores: the thresholds read off the items, the
flips they leave, and the prefixes it asks after."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench_fixtures import REPO

from cowp_ros.methods.grounded import questions

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_question_views import (
    SCENARIO,
    WAYS,
    Viewed,
    best_thresholds,
    decisions,
    figures,
    forms_prefix,
    main,
)

AS_ASKED, STEP_TOO = WAYS[0], WAYS[1]


def item(
    group: int, kind: str, label: bool | None, use: float, dirty: float = -5.0, **more: float
) -> Viewed:
    scores = {"use": use, "dirty": dirty, "use_step": -5.0} | more
    return Viewed(
        "fill_cup", group, kind, f"{kind} {group} {use}", "hold_cup", label, "cup_1", "", scores
    )


def test_the_thresholds_read_off_decide_every_item_right_where_a_cut_can() -> None:
    items = [
        item(1, "canonical", True, 1.0),
        item(1, "verb", True, 0.2),
        item(2, "canonical", False, -1.0),
        item(2, "verb", False, -0.5),
    ]
    use, _ = best_thresholds(items, AS_ASKED)
    assert -0.5 < use <= 0.2
    found = figures(items, decisions(items, AS_ASKED, use, 99.0))
    assert found["flip_rate"]["pct"] == 0.0 and found["accuracy"]["pct"] == 100.0


def test_a_rewording_no_cut_can_save_counts_as_a_flip() -> None:
    items = [
        item(1, "canonical", True, 1.0),
        item(1, "verb", True, -2.0),  # below the harmless canonical: no cut decides both
        item(2, "canonical", False, -1.0),
        item(2, "length", False, -1.5),
    ]
    use, _ = best_thresholds(items, AS_ASKED)
    found = figures(items, decisions(items, AS_ASKED, use, 99.0))
    assert found["flip_rate"]["pct"] == 50.0 and found["accuracy"]["pct"] == 50.0


def test_dirt_blocks_only_a_role_open_to_it() -> None:
    dirty_cup = item(1, "canonical", True, -3.0, dirty=4.0)
    assert decisions([dirty_cup], AS_ASKED, 0.0, 2.0) == [False]
    dirty_cup.needed_clean = True
    assert decisions([dirty_cup], AS_ASKED, 0.0, 2.0) == [True]


def test_the_step_words_block_where_either_question_does() -> None:
    said_by_its_step = item(1, "canonical", True, -3.0, use_step=1.0)
    assert decisions([said_by_its_step], AS_ASKED, 0.0, 9.0) == [False]
    assert decisions([said_by_its_step], STEP_TOO, 0.0, 9.0) == [True]


def test_scenarios_are_counted_apart_and_a_missed_one_is_named() -> None:
    items = [
        item(1, "canonical", True, 1.0),
        item(1, "verb", True, 1.0),
        item(0, SCENARIO, True, -1.0),
        item(0, SCENARIO, None, 2.0),  # a scenario that does not say is not counted
    ]
    found = figures(items, decisions(items, AS_ASKED, 0.0, 9.0))
    assert found["scenarios_as_filed"] == "0/1"
    assert found["scenarios_missed"] == [items[2].text]
    assert found["flip_rate"]["n"] == 1


def test_an_item_about_no_object_is_left_out() -> None:
    about_nothing = Viewed("fill_cup", 1, "verb", "it rains", "hold_cup", True)
    assert decisions([about_nothing], AS_ASKED, 0.0, 0.0) == [None]


def test_the_forms_prefix_keeps_every_example_of_the_method_and_adds_each_form_both_ways() -> None:
    prefix = forms_prefix()
    assert set(questions.EXAMPLES) < set(prefix)
    added = [e for e in prefix if e not in questions.EXAMPLES]
    assert {e.answer for e in added} == {"Yes", "No"}
    # uses before states, as in the method's prefix: every use example comes first
    kinds = ["use" if e.question.endswith("for the task?") else "other" for e in prefix]
    assert kinds[: kinds.count("use")] == ["use"] * kinds.count("use")


def test_a_file_the_bench_did_not_write_is_refused_by_name(tmp_path: Path, capsys) -> None:
    for text in ("not json", json.dumps({"items": 3}), json.dumps({"items": []})):
        kept = tmp_path / "views.json"
        kept.write_text(text)
        assert main(["--from-json", str(kept)]) == 2
        err = capsys.readouterr().err
        assert f"{kept} is not a file bench_question_views.py --json wrote" in err
        assert "run the script with --json first" in err
