"""A score that measures understanding: hard blocking situations weigh at least half.

The crowd's dataset is mostly "use the second cup": on the test tasks most blocking
situations have a spare of the same kind present, which a rule that only retries
handles. A method's headline figure then mostly measures that. Three classes need more
than retrying (`CLASSES`): a silent harm (the step would succeed: only reading the
sentence avoids it), a cross-kind need (no spare of the kind; only a stand-in of
another kind a person accepts does it) and no solution (declared unsolvable in the judge
files: the right answer is to stop, harmlessly, which the world records as rightly given
up). A blocking situation is put in the first class that fits, in the order of
`CLASSES`. One for which this trial holds no acceptable object, though the judge files
declare none unsolvable, is counted apart (`none_present`) and scored in neither
figure: no method can handle it, and the records do not say whether stopping there was
understood.

Two figures are read from the same records, beside the per-trial ones:

- **balanced**: each blocking situation is a success when handled (or, with no
  solution, rightly given up on), weighted so that the hard classes together weigh at
  least half of the total (each hard situation weighs w, each easy one 1, with w the
  smallest weight >= 1 that makes it so). Its 95 % interval comes from a bootstrap over
  trials with a fixed seed (the weighting makes a binomial interval wrong; trials are
  the clusters), so the figure is the same on every run of the table.
- **per situation**: the success rate of each distinct (task, situation) averaged with
  equal weight, so that a frequent sentence counts once, not by its crowd count.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

CLASSES = ("silent", "no_solution", "cross_kind", "same_kind", "other")
APART = "none_present"
HARD = frozenset({"silent", "no_solution", "cross_kind"})
BOOTSTRAP = 1000
_INSTANCE = re.compile(r"_\d+$")


def _kind(name: str) -> str:
    return _INSTANCE.sub("", name)


def situation_class(s: dict[str, Any]) -> str:
    """Which class a blocking situation's record falls in (see the module docstring)."""
    if s.get("harm") == "silent":
        return "silent"
    if s.get("unsolvable"):
        return "no_solution"
    if not s.get("alternative_present", True):
        return APART
    if s.get("effect") != "disables":
        return "other"
    kinds = {_kind(t) for t in s.get("targets") or ()}
    spares = [a for a in s.get("alternatives") or () if _kind(a) in kinds]
    return "same_kind" if spares else "cross_kind"


def success(s: dict[str, Any]) -> bool:
    """Handled, or, where there was no solution, rightly given up on."""
    return bool(s.get("handled") or s.get("gave_up_rightly"))


def hard_weight(hard: int, easy: int) -> float:
    """The weight of a hard situation that makes the hard ones at least half (>= 1)."""
    if hard <= 0 or hard >= easy:
        return 1.0
    return easy / hard


def _balanced(units: Sequence[tuple[int, int, int, int]], weight: float) -> float | None:
    """units: per trial (hard successes, hard, easy successes, easy)."""
    total = sum(weight * h + e for _, h, _, e in units)
    if total <= 0:
        return None
    return sum(weight * hs + es for hs, _, es, _ in units) / total


def understanding(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per class counts, the balanced figure with its interval, and the per-situation one."""
    by_class: dict[str, list[bool]] = {c: [] for c in (*CLASSES, APART)}
    units: list[tuple[int, int, int, int]] = []
    per_situation: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for r in records:
        hs = h = es = e = 0
        for s in r["situations"]:
            if not s.get("blocking"):
                continue
            cls, ok = situation_class(s), success(s)
            by_class[cls].append(ok)
            if cls == APART:
                continue
            per_situation[(r["task"], s["key"])].append(ok)
            if cls in HARD:
                hs, h = hs + ok, h + 1
            else:
                es, e = es + ok, e + 1
        units.append((hs, h, es, e))
    hard = sum(u[1] for u in units)
    easy = sum(u[3] for u in units)
    weight = hard_weight(hard, easy)
    point = _balanced(units, weight)
    rng = random.Random(0)
    draws = []
    if point is not None and len(units) > 1:
        for _ in range(BOOTSTRAP):
            sample = [units[rng.randrange(len(units))] for _ in units]
            value = _balanced(
                sample, hard_weight(sum(u[1] for u in sample), sum(u[3] for u in sample))
            )
            if value is not None:
                draws.append(value)
    draws.sort()
    ci = (
        (
            round(100 * draws[int(0.025 * len(draws))], 1),
            round(100 * draws[int(0.975 * len(draws)) - 1], 1),
        )
        if draws
        else None
    )
    rates = [sum(v) / len(v) for v in per_situation.values()]
    return {
        "classes": {c: {"k": sum(v), "n": len(v)} for c, v in by_class.items()},
        "hard_share": round(hard / (hard + easy), 3) if hard + easy else None,
        "hard_weight": round(weight, 3),
        "balanced": {"pct": None if point is None else round(100 * point, 1), "ci95": ci},
        "per_situation": {
            "pct": round(100 * sum(rates) / len(rates), 1) if rates else None,
            "situations": len(rates),
        },
    }


def balanced_rows(methods: dict[str, Any], scope: str) -> list[str]:
    """The table of the balanced and per-situation figures, by method, for one scope."""
    head = (
        "| method | silent harms | no solution (handled or rightly gave up) | cross-kind need "
        "| same-kind spare | other | hard share of the blocking | balanced score % (hard "
        "weigh half; bootstrap 95 % CI) | per-situation score % (distinct situations) | "
        "nothing acceptable present (apart) |"
    )
    lines = [head, "|" + "---|" * 10]
    for m in methods.values():
        u = m["scopes"].get(scope, {}).get("understanding")
        if not u:
            continue
        classes = " | ".join(f"{u['classes'][c]['k']}/{u['classes'][c]['n']}" for c in CLASSES)
        balanced = u["balanced"]
        ci = balanced["ci95"]
        shown = "-" if balanced["pct"] is None else f"{balanced['pct']:g}"
        if ci:
            shown += f" [{ci[0]:g}, {ci[1]:g}]"
        per = u["per_situation"]
        per_shown = "-" if per["pct"] is None else f"{per['pct']:g} ({per['situations']})"
        share = "-" if u["hard_share"] is None else f"{100 * u['hard_share']:.0f} %"
        apart = u["classes"][APART]["n"]
        lines.append(f"| {m['label']} | {classes} | {share} | {shown} | {per_shown} | {apart} |")
    return lines
