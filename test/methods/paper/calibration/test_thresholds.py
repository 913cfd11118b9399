"""Threshold selection on synthetic scores (higher = blocked)."""

from __future__ import annotations

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.calibration.thresholds import (
    auc,
    candidate_thresholds,
    choose_threshold,
    operating_point,
)


def test_separable_scores_get_a_threshold_between_the_classes() -> None:
    scores = [2.0, 3.0, 4.0, -1.0, 0.0, 0.5]
    labels = [True, True, True, False, False, False]
    point = choose_threshold(scores, labels)
    assert 0.5 < point.threshold < 2.0
    assert (point.recall, point.false_alarm_rate, point.precision) == (1.0, 0.0, 1.0)
    assert point.meets() and auc(scores, labels) == 1.0


def test_overlapping_scores_take_the_best_trade_off_when_the_goal_is_out_of_reach() -> None:
    # Blockers 1..10, benign 0..9 shifted: no threshold gives recall >= 0.9 at <= 10 % FA.
    blocking = [float(x) for x in range(1, 11)]
    benign = [float(x) - 3.5 for x in range(1, 11)]
    scores, labels = blocking + benign, [True] * 10 + [False] * 10
    point = choose_threshold(scores, labels)
    assert not point.meets()
    best = max(
        (operating_point(scores, labels, t) for t in candidate_thresholds(scores)),
        key=lambda p: p.youden,
    )
    assert point.youden == pytest.approx(best.youden)
    assert point.recall - point.false_alarm_rate == pytest.approx(0.4)


def test_a_point_meeting_the_goal_wins_over_a_higher_youden_one() -> None:
    # Best Youden (recall 1.0, 15 % FA, J 0.85) misses the goal; the goal point
    # (recall 0.9, 10 % FA, J 0.8) is the one to deploy.
    blocking = [5.0] * 18 + [2.0, 0.5]
    benign = [6.0, 6.0, 2.2] + [0.0] * 17
    scores, labels = blocking + benign, [True] * 20 + [False] * 20
    point = choose_threshold(scores, labels)
    assert point.meets() and point.recall == pytest.approx(0.9)
    assert 2.2 < point.threshold < 5.0
    loose = choose_threshold(scores, labels, recall=1.0, false_alarm=0.2)
    assert loose.recall == 1.0 and loose.threshold < 0.5


def test_operating_point_counts_and_edge_thresholds() -> None:
    scores, labels = [1.0, 2.0, 0.0], [True, True, False]
    assert operating_point(scores, labels, 1.5).to_dict()["recall"] == 0.5
    everything = operating_point(scores, labels, min(candidate_thresholds(scores)))
    assert (everything.recall, everything.false_alarm_rate) == (1.0, 1.0)
    nothing = operating_point(scores, labels, max(candidate_thresholds(scores)))
    assert (nothing.recall, nothing.false_alarm_rate, nothing.precision) == (0.0, 0.0, 1.0)


def test_one_class_only_is_an_error() -> None:
    with pytest.raises(CowpError, match="both blocking and benign"):
        choose_threshold([1.0, 2.0], [True, True])
    with pytest.raises(CowpError, match="differ in length"):
        operating_point([1.0], [True, False], 0.0)
