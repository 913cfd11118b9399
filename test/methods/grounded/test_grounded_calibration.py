"""Choosing the grounded method's thresholds from dev scores by one rule
(`cowp_ros.methods.grounded.calibration`), and the shipped entry following from the kept
dev scores by that rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowp_ros.methods.grounded.calibration import (
    ScoredItem,
    blocks,
    choose_object_thresholds,
    choose_world_threshold,
    object_gain,
)
from cowp_ros.methods.grounded.settings import GroundedSettings

REPO = Path(__file__).resolve().parents[3]
KEPT_DEV = REPO / "benchmarks/results/grounded_thresholds/dev.json"


def item(blocking: bool, use: float, **scores: float) -> ScoredItem:
    return ScoredItem(blocking, 1, use, **scores)


def test_the_use_threshold_sits_in_the_middle_of_the_gap_between_labels() -> None:
    items = [item(True, 1.0), item(True, 0.6), item(False, -0.4), item(False, -1.0)]
    chosen = choose_object_thresholds(items)
    assert chosen is not None
    assert chosen.use == pytest.approx(0.1)
    assert chosen.gain == 2 and chosen.best_gain == 2
    assert chosen.margin == pytest.approx(0.5)


def test_a_coin_toss_is_refused_for_the_gain_it_would_bring() -> None:
    # A harmless item 0.02 below a blocking one: the best cut sits between them, 0.01
    # from each; the rule takes the robust cut below both and its false alarm instead.
    items = [item(True, 1.0), item(True, 0.52), item(False, 0.5), item(False, -1.0)]
    chosen = choose_object_thresholds(items)
    assert chosen is not None
    assert chosen.best_gain == 2 and chosen.gain == 1
    assert chosen.use == pytest.approx(-0.25)
    assert chosen.margin >= 0.08
    at_any_margin = choose_object_thresholds(items, margin=0.0)
    assert at_any_margin is not None and at_any_margin.gain == 2
    assert at_any_margin.use == pytest.approx(0.51)


def test_where_every_cut_between_items_is_a_coin_toss_nothing_is_decided_by_them() -> None:
    items = [item(False, 0.0), item(True, 0.01), item(False, 0.02), item(True, 0.03)]
    chosen = choose_object_thresholds(items)
    assert chosen is not None and chosen.gain == 0 and chosen.best_gain == 1
    assert chosen.use < 0.0 or chosen.use > 0.03  # beyond every item: all or nothing
    assert choose_object_thresholds(items, margin=0.6) is None


def test_an_item_both_questions_block_is_decided_by_neither_alone() -> None:
    # The dirty cup is blocked by its dirt whatever its use score (the dirt threshold
    # must catch the other dirty item, whose use is low), so the use threshold may sit
    # close to it: it is the gap between the items the use question decides that counts.
    dirty_cup = item(True, 0.0, dirty=3.0, need=2.0)
    items = [
        item(True, 1.0, dirty=-2.0, need=2.0),
        dirty_cup,
        item(True, -1.5, dirty=3.0, need=2.0),
        item(False, -1.0, dirty=-2.0, need=2.0),
    ]
    chosen = choose_object_thresholds(items)
    assert chosen is not None and chosen.gain == 3
    assert blocks(dirty_cup, chosen.use, chosen.dirty, chosen.need)
    assert chosen.use == pytest.approx(0.0)  # the middle of -1.0 and 1.0
    assert chosen.dirty == pytest.approx(0.5)


def test_dirt_a_task_expects_never_blocks() -> None:
    expected = item(False, -2.0, dirty=4.0, need=2.0, task_dirty=3.0)
    assert not blocks(expected, use=0.0, dirty=1.0, need=0.0)
    news = item(True, -2.0, dirty=4.0, need=2.0, task_dirty=-3.0)
    assert blocks(news, use=0.0, dirty=1.0, need=0.0)


def test_the_need_threshold_keeps_clear_of_every_roles_need() -> None:
    # Two roles meet a dirty situation (needs -1.0, 1.5), two others do not (0.3, 0.35);
    # any role can, so the need threshold keeps clear of all four: not at 0.25, the
    # middle of the two it decides here, 0.05 from the role at 0.3.
    items = [
        item(True, -2.0, dirty=3.0, need=1.5),
        item(False, -2.0, dirty=-3.0, need=0.3),
        item(False, -2.0, dirty=-3.0, need=0.35),
        item(False, -2.0, dirty=3.0, need=-1.0),
    ]
    chosen = choose_object_thresholds(items)
    assert chosen is not None and chosen.gain == 1
    assert min(abs(chosen.need - n) for n in (-1.0, 0.3, 0.35, 1.5)) >= 0.08
    assert chosen.margin >= 0.08


def test_the_world_threshold_stops_no_harmless_item() -> None:
    chosen = choose_world_threshold([(1.3, False), (0.2, False), (1.0, True), (2.0, True)])
    assert chosen is not None
    assert chosen.threshold == pytest.approx(1.38)
    assert (chosen.blocks, chosen.blocking, chosen.false_alarms) == (1, 2, 0)
    assert choose_world_threshold([]) is None


def kept_dev_items() -> list[ScoredItem]:
    kept = json.loads(KEPT_DEV.read_text())["items"]
    return [
        ScoredItem(i["blocking"], i["weight"], i["score"], i["dirty"], i["need"], i["task_dirty"])
        for i in kept
        if i["by"] == "question" and i["score"] is not None
    ]


def test_the_shipped_thresholds_follow_from_the_kept_dev_scores_by_the_rule() -> None:
    """config/grounded.yaml's entry for the embedded model is what the rule chooses from
    the dev scores kept beside it: the same decision on every dev item, each threshold
    within a hundredth of the rule's (the entry was written from scores rounded to two
    places)."""
    items = kept_dev_items()
    assert len(items) == 116
    shipped = GroundedSettings.for_model("qwen2.5-coder-1.5b")
    chosen = choose_object_thresholds(items)
    assert chosen is not None
    assert chosen.use == pytest.approx(shipped.use_threshold, abs=0.01)
    assert chosen.dirty == pytest.approx(shipped.dirty_threshold, abs=0.01)
    assert chosen.need == pytest.approx(shipped.need_threshold, abs=0.01)
    rule = [blocks(i, chosen.use, chosen.dirty, chosen.need) for i in items]
    ship = [
        blocks(i, shipped.use_threshold, shipped.dirty_threshold, shipped.need_threshold)
        for i in items
    ]
    assert rule == ship
    assert chosen.gain == object_gain(
        items, shipped.use_threshold, shipped.dirty_threshold, shipped.need_threshold
    )
    assert (chosen.gain, chosen.best_gain) == (215, 219)
