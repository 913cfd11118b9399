"""The grounded method's own figures, read from a `cowp bench` results folder.

    .venv/bin/python benchmarks/bench_grounded_figures.py benchmarks/results/NAME \
        [--method grounded] [--against cw,cowp] [--trials 20] [--json OUT] [--smoke]

What the benchmark's table does not say, from the same trial records:

- **Completion against another method on the same trials**: the paired difference
  with its 95 % interval (Newcombe's hybrid score interval for paired proportions:
  both methods face the same draws, so the interval is much narrower than for two
  independent samples).
- **Harmless situations** (dataset situations that block nothing where they were
  raised, and distractors): how many changed their trial (the benchmark's "changed")
  or broke it (the trial failed and every situation in it was harmless, which a
  method that ignored them all would have completed).
- **How each situation was decided** (the method's trace: `decided: ...` lines; a
  situation decided again after a replan counts once, by its blocking decision if it
  had one, else by its first): by grounding alone, by one question about the object,
  by one question about the task; how many situations were blamed when a step failed
  after them, how many trials went on to the acquirer, and the questions per
  situation raised (all questions, cached answers counted, over all situations).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cowp_ros.bench.runner import load_records
from cowp_ros.tasks import split_tasks

Z = 1.959963984540054


def wilson(successes: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return (centre - half, centre + half)


def paired_difference(first: Sequence[bool], second: Sequence[bool]) -> dict[str, Any]:
    """first - second completion on the same trials, with Newcombe's 95 % interval."""
    n = len(first)
    a = sum(1 for x, y in zip(first, second, strict=True) if x and y)
    b = sum(1 for x, y in zip(first, second, strict=True) if x and not y)
    c = sum(1 for x, y in zip(first, second, strict=True) if not x and y)
    d = n - a - b - c
    if n == 0:
        return {"n": 0}
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n)
    l2, u2 = wilson(a + c, n)
    denominator = math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    phi = (a * d - b * c) / denominator if denominator else 0.0
    delta = p1 - p2
    lower = delta - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    upper = delta + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return {
        "n": n,
        "difference_pct": round(100 * delta, 1),
        "ci95_pct": [round(100 * lower, 1), round(100 * upper, 1)],
        "only_first": b,
        "only_second": c,
    }


def harmless(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Fired harmless events: changed their trial, or broke it (see the docstring)."""
    fired = changed = broke = 0
    for record in records:
        events = [
            *(s for s in record["situations"] if s["fired"] and not s["blocking"]),
            *(d for d in record["distractors"] if d["fired"]),
        ]
        if not events:
            continue
        only_harmless = not any(s["fired"] and s["blocking"] for s in record["situations"])
        for event in events:
            fired += 1
            if event["changed"]:
                changed += 1
            elif only_harmless and not record["completed"]:
                broke += 1
    low, high = wilson(changed + broke, fired)
    return {
        "fired": fired,
        "changed": changed,
        "broke": broke,
        "share_pct": round(100 * (changed + broke) / fired, 1) if fired else None,
        "ci95_pct": [round(100 * low, 1), round(100 * high, 1)],
    }


def decisions(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How the situations were decided, from the trace's `decided:` lines (the last
    decision about each situation counts), and the acquirer's share."""
    by: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    acquired = fired = questions = blamed = 0
    for record in records:
        fired += sum(1 for s in record["situations"] if s["fired"])
        fired += sum(1 for d in record["distractors"] if d["fired"])
        usage = record["usage"]
        questions += usage["calls"] + usage["cache_hits"]
        chosen: dict[str, str] = {}
        for line in record["trace"]:
            if line.startswith("decided: "):
                situation = line[len("decided: ") :].split(": ", 1)[0]
                if situation not in chosen or (
                    ": blocks " in line and ": blocks " not in chosen[situation]
                ):
                    chosen[situation] = line
        for line in chosen.values():
            how = (
                "grounding alone"
                if "by grounding alone" in line
                else "one question about the task"
                if "about the task" in line
                else "one question"
            )
            by[how] += 1
            verdicts[f"{how}: {'blocks' if ': blocks ' in line else 'harmless'}"] += 1
        if any(line.startswith("acquirer: asked") for line in record["trace"]):
            acquired += 1
        blamed += sum(1 for line in record["trace"] if "failed after it" in line)
    return {
        "situations_raised": fired,
        "decided_by": dict(by),
        "verdicts": dict(verdicts),
        "blamed_when_a_step_failed": blamed,
        "trials_that_asked_the_acquirer": acquired,
        "questions": questions,
        "questions_per_situation": round(questions / fired, 2) if fired else None,
    }


SMOKE_RESULTS = Path(__file__).resolve().parent / "results" / "grounded_cowp_test_journal_80"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", help="a cowp bench --out folder")
    parser.add_argument("--method", default="grounded")
    parser.add_argument("--against", default="cw,cowp", help="methods to pair with")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="two trials a task of the kept test run (for CI; the figures mean nothing)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.out = args.out or SMOKE_RESULTS
        args.trials = 2
    if args.out is None:
        parser.error("name a cowp bench --out folder")
    tasks = split_tasks()[args.split]
    mine = {
        (r["task"], r["index"]): r
        for r in load_records(args.out, [args.method], tasks, args.trials)
    }
    summary: dict[str, Any] = {
        "method": args.method,
        "split": args.split,
        "trials": len(mine),
        "completion_pct": round(100 * sum(r["completed"] for r in mine.values()) / len(mine), 1)
        if mine
        else None,
    }
    for other in [m for m in args.against.split(",") if m]:
        theirs = {
            (r["task"], r["index"]): r for r in load_records(args.out, [other], tasks, args.trials)
        }
        common = sorted(set(mine) & set(theirs))
        summary[f"vs_{other}"] = paired_difference(
            [mine[k]["completed"] for k in common], [theirs[k]["completed"] for k in common]
        )
    summary["harmless"] = harmless(list(mine.values()))
    summary["decisions"] = decisions(list(mine.values()))
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
