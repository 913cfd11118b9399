"""Choosing a threshold on scores: recall on blockers against false alarms on benign.

The calibration goal is at most 10 % false alarms at 90 % recall or more. A threshold
that meets both is preferred; among those (and, when none does, among all) the one with
the largest recall minus false-alarm rate (Youden's J) wins, ties going to the higher
threshold (fewer false alarms). Thresholds are midpoints between adjacent distinct
scores, plus one below and one above all of them, so the choice never sits exactly on a
dev score and a test score equal to a dev score is decided the same way.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from cowp_ros.errors import CowpError

GOAL_RECALL = 0.90
GOAL_FALSE_ALARM = 0.10


@dataclass(frozen=True)
class OperatingPoint:
    """What a threshold does on a set of scored items (blocked when score >= threshold)."""

    threshold: float
    recall: float
    """Blocking situations flagged / blocking situations."""
    false_alarm_rate: float
    """Benign situations flagged / benign situations."""
    precision: float
    """Flagged situations that were blocking / flagged situations (1.0 when none flagged)."""
    n_blocking: int
    n_benign: int

    @property
    def youden(self) -> float:
        return self.recall - self.false_alarm_rate

    def meets(self, recall: float = GOAL_RECALL, false_alarm: float = GOAL_FALSE_ALARM) -> bool:
        return self.recall >= recall and self.false_alarm_rate <= false_alarm

    def to_dict(self) -> dict[str, float | int]:
        return {
            "threshold": round(self.threshold, 4),
            "recall": round(self.recall, 4),
            "false_alarm_rate": round(self.false_alarm_rate, 4),
            "precision": round(self.precision, 4),
            "n_blocking": self.n_blocking,
            "n_benign": self.n_benign,
        }


def _check(scores: Sequence[float], labels: Sequence[bool]) -> None:
    if len(scores) != len(labels):
        raise CowpError("scores and labels differ in length")
    if not any(labels) or all(labels):
        raise CowpError("calibration needs both blocking and benign situations with scores")


def operating_point(
    scores: Sequence[float], labels: Sequence[bool], threshold: float
) -> OperatingPoint:
    """Recall, false-alarm rate and precision at `threshold` (labels: True = blocking)."""
    _check(scores, labels)
    flagged = [score >= threshold for score in scores]
    n_blocking = sum(labels)
    n_benign = len(labels) - n_blocking
    hits = sum(f and b for f, b in zip(flagged, labels, strict=True))
    alarms = sum(f and not b for f, b in zip(flagged, labels, strict=True))
    precision = hits / (hits + alarms) if hits + alarms else 1.0
    return OperatingPoint(
        threshold, hits / n_blocking, alarms / n_benign, precision, n_blocking, n_benign
    )


def candidate_thresholds(scores: Sequence[float]) -> list[float]:
    """Midpoints of adjacent distinct scores, and one step beyond each end."""
    distinct = sorted(set(scores))
    if not distinct:
        return []
    inner = [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    return [distinct[0] - 1.0, *inner, distinct[-1] + 1.0]


def curve(scores: Sequence[float], labels: Sequence[bool]) -> list[OperatingPoint]:
    """Every candidate threshold's operating point, lowest threshold first."""
    _check(scores, labels)
    return [operating_point(scores, labels, t) for t in candidate_thresholds(scores)]


def choose_threshold(
    scores: Sequence[float],
    labels: Sequence[bool],
    *,
    recall: float = GOAL_RECALL,
    false_alarm: float = GOAL_FALSE_ALARM,
) -> OperatingPoint:
    """The operating point to deploy (see the module docstring for the rule)."""
    points = curve(scores, labels)
    meeting = [p for p in points if p.meets(recall, false_alarm)]
    pool = meeting or points
    return max(pool, key=lambda p: (p.youden, p.threshold))


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """ROC area: P(a blocker scores above a benign situation), ties counted half."""
    _check(scores, labels)
    blocking = [s for s, b in zip(scores, labels, strict=True) if b]
    benign = [s for s, b in zip(scores, labels, strict=True) if not b]
    wins = sum((x > y) + 0.5 * (x == y) for x in blocking for y in benign)
    return wins / (len(blocking) * len(benign))
