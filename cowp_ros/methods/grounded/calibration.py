"""Choosing the grounded method's thresholds for a model, from its dev scores, by one rule.

The thresholds are per model (`config/grounded.yaml`): a stronger server's P(yes) is not
the 1.5B model's. They are chosen on the dev tasks from every dev item's scores
(`benchmarks/bench_grounded_thresholds.py --split dev`), and this module is that choice
written down, so that a user with another server gets an entry by the same rule the
shipped one was chosen by, not by eye:

- **the object thresholds** (use, dirty, need) together: every combination of cuts at a
  midpoint between neighbouring dev scores, the crowd-weighted (true blocks - false
  alarms) of the object decision at each; among the combinations at least `margin` from
  every dev item each threshold decides (scores move by a few hundredths between runs of
  the same prompt, so a threshold closer than that to an item is a coin toss), the one
  that gains most, each threshold then moved to the middle of the gap it sits in between
  the items it decides. The need threshold keeps clear of every dev role's need, not only
  of the items it decides: a role's need does not depend on the situation, and any role
  can meet a dirty one;
- **the world threshold** (a sentence about no object present stops the task only on a
  sure "no"): `margin` above the highest dev score of a harmless world item, the lowest
  threshold that stops no harmless dev item and keeps clear of them all.

An item "decided" by a threshold is one whose decision changes when only that threshold
crosses its score: a dirty cup blocked by both the use and the dirt questions is decided
by neither alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MARGIN = 0.08
"""How far a threshold keeps from every dev item it decides (scores of the same prompt
move by up to about 0.05 between runs: llama.cpp splits a prompt it partly has cached
differently)."""


@dataclass(frozen=True)
class ScoredItem:
    """One dev item as the monitor's questions scored it (each score the log-odds of the
    answer that blocks) and the judge's label, weighted by how many people named it."""

    blocking: bool
    weight: int
    use: float
    dirty: float | None = None
    need: float | None = None
    task_dirty: float | None = None  # log-odds that the task's own words call it dirty


def blocks(item: ScoredItem, use: float, dirty: float, need: float) -> bool:
    """The object decision: it can no longer be used, or it is dirty and the task needs it
    clean (a task whose own words call it dirty does not)."""
    return item.use >= use or dirt_blocks(item, dirty, need)


def open_to_dirt(item: ScoredItem) -> bool:
    """Dirt can block it: both dirt questions were asked, and the task's own words do not
    call it dirty (the model's word, P(yes) >= 0.5: dirt the task expects is no news)."""
    expected = item.task_dirty is not None and item.task_dirty >= 0.0
    return item.dirty is not None and item.need is not None and not expected


def dirt_blocks(item: ScoredItem, dirty: float, need: float) -> bool:
    return (
        open_to_dirt(item)
        and item.dirty is not None
        and item.need is not None
        and item.dirty >= dirty
        and item.need >= need
    )


@dataclass(frozen=True)
class ObjectChoice:
    """The object thresholds chosen, what they reach, and how far they keep from the
    items they decide."""

    use: float
    dirty: float
    need: float
    gain: float  # crowd-weighted (true blocks - false alarms) on the items
    best_gain: float  # the most any combination reaches, margin or not
    margin: float  # the closest any threshold comes to an item it decides


@dataclass(frozen=True)
class WorldChoice:
    threshold: float
    blocks: int  # blocking world items it stops
    blocking: int
    false_alarms: int  # harmless world items it stops (none by construction)


def cuts(values: Sequence[float]) -> list[float]:
    """Midpoints between neighbouring distinct values, and one beyond each end."""
    ordered = sorted(set(values))
    if not ordered:
        return [0.0]
    inner = [(a + b) / 2 for a, b in itertools.pairwise(ordered)]
    return [ordered[0] - 0.5, *inner, ordered[-1] + 0.5]


class _Arrays:
    """The items as columns (a missing score is NaN: it never reaches a threshold)."""

    def __init__(self, items: Sequence[ScoredItem]) -> None:
        def column(values: Sequence[float | None]) -> np.ndarray:
            return np.array([math.nan if v is None else v for v in values], dtype=float)

        self.use = column([i.use for i in items])
        self.dirty = column([i.dirty for i in items])
        self.need = column([i.need for i in items])
        self.open_to_dirt = np.array([open_to_dirt(i) for i in items], dtype=bool)
        self.signed = np.array([i.weight if i.blocking else -i.weight for i in items], dtype=float)


def _closest(distances: np.ndarray, decided: np.ndarray) -> np.ndarray:
    """Per row, the smallest distance among the decided items (inf where none is)."""
    return np.where(decided, distances, np.inf).min(axis=1, initial=np.inf)


def choose_object_thresholds(
    items: Sequence[ScoredItem], margin: float = MARGIN
) -> ObjectChoice | None:
    """The (use, dirty, need) thresholds by the rule of the module's docstring, or None
    when no combination keeps `margin` from the items it decides (the cuts beyond every
    item keep 0.5: below that margin there is always one, if only to block nothing)."""
    if not items:
        return None
    a = _Arrays(items)
    use_cuts = np.array(cuts(a.use.tolist()))
    dirty_cuts = cuts(a.dirty[~np.isnan(a.dirty)].tolist())
    need_cuts = cuts(a.need[~np.isnan(a.need)].tolist())
    used = a.use[None, :] >= use_cuts[:, None]  # (use cuts, items)
    use_distance = np.abs(a.use[None, :] - use_cuts[:, None])
    best_gain = -math.inf
    candidates: list[tuple[float, float, float, float, float]] = []
    with np.errstate(invalid="ignore"):
        for dirty in dirty_cuts:
            is_dirty = a.dirty >= dirty
            for need in need_cuts:
                needed = a.need >= need
                by_dirt = a.open_to_dirt & is_dirty & needed
                gains = (used | by_dirt[None, :]) @ a.signed
                best_gain = max(best_gain, float(gains.max()))
                # Each threshold's closest decided item, per use cut.
                near_use = _closest(use_distance, ~by_dirt[None, :])
                left = ~used & (a.open_to_dirt & needed)[None, :]
                near_dirty = _closest(np.abs(a.dirty - dirty)[None, :], left)
                # A role's need does not depend on the situation: any dev role can meet
                # a dirty one, so the need threshold keeps clear of every role's.
                near_need = np.nanmin(np.abs(a.need - need), initial=np.inf)
                closest = np.minimum(near_use, np.minimum(near_dirty, near_need))
                for row in np.flatnonzero(closest >= margin):
                    candidates.append(
                        (float(gains[row]), float(closest[row]), use_cuts[row], dirty, need)
                    )
    if not candidates:
        return None
    top = max(c[0] for c in candidates)
    _, _, use, dirty, need = max((c for c in candidates if c[0] == top), key=lambda c: c[1])
    use, dirty, need = _centred(items, use, dirty, need)
    return ObjectChoice(
        use=round(float(use), 3),
        dirty=round(float(dirty), 3),
        need=round(float(need), 3),
        gain=top,
        best_gain=best_gain,
        margin=round(float(_margin(items, use, dirty, need)), 3),
    )


def _decided_scores(
    items: Sequence[ScoredItem], use: float, dirty: float, need: float
) -> tuple[list[float], list[float]]:
    """The use and dirt scores of the items each of those thresholds decides."""
    by_use = [i.use for i in items if not dirt_blocks(i, dirty, need)]
    by_dirty = [
        i.dirty
        for i in items
        if i.use < use
        and open_to_dirt(i)
        and i.dirty is not None
        and i.need is not None
        and i.need >= need
    ]
    return by_use, by_dirty


def _middle(scores: Sequence[float], threshold: float) -> float:
    """The middle of the gap around `threshold` between the scores below and above it."""
    below = [s for s in scores if s < threshold]
    above = [s for s in scores if s >= threshold]
    if below and above:
        return (max(below) + min(above)) / 2
    return threshold


def _centred(
    items: Sequence[ScoredItem], use: float, dirty: float, need: float
) -> tuple[float, float, float]:
    """Each threshold moved to the middle of its gap between the items it decides (the
    decisions stay the same: no decided item lies inside the gap)."""
    # The need is a role's, whatever the situation: it sits between the dev roles'.
    roles = [i.need for i in items if i.need is not None]
    for _ in range(3):  # moving one can change which items another decides
        by_use, by_dirty = _decided_scores(items, use, dirty, need)
        moved = (_middle(by_use, use), _middle(by_dirty, dirty), _middle(roles, need))
        if moved == (use, dirty, need):
            break
        if [blocks(i, *moved) for i in items] != [blocks(i, use, dirty, need) for i in items]:
            break
        use, dirty, need = moved
    return use, dirty, need


def _margin(items: Sequence[ScoredItem], use: float, dirty: float, need: float) -> float:
    by_use, by_dirty = _decided_scores(items, use, dirty, need)
    distances = [
        *(abs(s - use) for s in by_use),
        *(abs(s - dirty) for s in by_dirty),
        *(abs(i.need - need) for i in items if i.need is not None),
    ]
    return min(distances, default=math.inf)


def object_gain(items: Sequence[ScoredItem], use: float, dirty: float, need: float) -> float:
    """Crowd-weighted (true blocks - false alarms) of the object decision."""
    return sum(
        (i.weight if i.blocking else -i.weight) for i in items if blocks(i, use, dirty, need)
    )


def choose_world_threshold(
    scores: Sequence[tuple[float, bool]], margin: float = MARGIN
) -> WorldChoice | None:
    """The task question's threshold from (score, blocking) dev world items: a sure "no"
    only, `margin` above every harmless item (see the module's docstring)."""
    if not scores:
        return None
    harmless = [s for s, is_blocking in scores if not is_blocking]
    blocking = [s for s, is_blocking in scores if is_blocking]
    threshold = max(harmless) + margin if harmless else min(blocking) - margin
    return WorldChoice(
        threshold=round(threshold, 3),
        blocks=sum(1 for s in blocking if s >= threshold),
        blocking=len(blocking),
        false_alarms=sum(1 for s in harmless if s >= threshold),
    )
