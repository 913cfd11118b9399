"""A seeded campaign: which fault kind each run gets, running them, and the table.

The schedule is a pure function of the seed, stratified: the kinds are dealt out in
rounds of every kind once (a campaign of at least as many runs as kinds runs each),
the families taking turns within a round; each run's own random source is seeded by
"SEED:NUMBER:KIND", so a failing run can be repeated alone (`--only NUMBER`).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.chaos import (
    graph_faults,  # noqa: F401  (registers the graph family)
    peer_faults,  # noqa: F401  (registers the peer family)
)
from cowp_ros.chaos.faults import REGISTRY, FaultContext, canary_for
from cowp_ros.chaos.invariants import INVARIANTS, check_all
from cowp_ros.chaos.record import Run
from cowp_ros.chaos.runner import execute

TABLE_CHECKS = {
    "ended_in_time": "hangs past bound",
    "strict_report": "missing/non-strict reports",
    "no_injection": "injected tokens in PDDL",
    "nothing_left": "orphans/temp files left",
    "no_secret": "keys printed",
    "clean_exit": "tracebacks/bad exits",
    "terminal_safe": "unsafe output",
    "bounded_memory": "memory over bound",
    "kept_expectations": "graph: no result, slow cancel, flood over bound; peer: not refused",
}


@dataclass(frozen=True)
class Planned:
    number: int
    kind: str
    seed: str


def schedule(seed: int, runs: int, names: Sequence[str]) -> list[Planned]:
    """`runs` runs over `names`, a pure function of `seed`, stratified: the kinds are
    dealt in rounds of every kind once, so a campaign of at least as many runs as kinds
    runs every kind; and within a round the families take turns (each family's kinds
    shuffled), so a shorter campaign still reaches every family in proportion."""
    if not names:
        return []
    rng = random.Random(seed)
    order: list[str] = []
    while len(order) < runs:
        order.extend(_one_round(rng, names))
    return [Planned(i + 1, name, f"{seed}:{i + 1}:{name}") for i, name in enumerate(order[:runs])]


def _one_round(rng: random.Random, names: Sequence[str]) -> list[str]:
    """Every kind once: the families' shuffled kinds taken in turn, the family that has
    most left first (so the round ends with every family used up together)."""
    families: dict[str, list[str]] = {}
    for name in names:
        kind = REGISTRY.get(name)
        families.setdefault(kind.family if kind is not None else "", []).append(name)
    for kinds in families.values():
        rng.shuffle(kinds)
    total = len(names)
    dealt: list[str] = []
    taken = dict.fromkeys(families, 0)
    while len(dealt) < total:
        # the family furthest behind its share of the round so far goes next
        family = min(
            (f for f in families if taken[f] < len(families[f])),
            key=lambda f: ((taken[f] + 1) / len(families[f]), rng.random()),
        )
        dealt.append(families[family][taken[family]])
        taken[family] += 1
    return dealt


MAX_REDRAWS = 3
"""How often a run whose fault was not reached is drawn again (a new seed each time)."""
NOT_EXERCISED = "not exercised"


def run_exercised(planned: Planned, out: Path) -> Run:
    """`run_one`, drawn again (the same kind, a derived seed) while its fault was not
    reached: a run the fault never touched proves nothing, so it never counts as a
    pass. After MAX_REDRAWS it is recorded as "not exercised" (and fails the campaign)."""
    run = run_one(planned, out)
    for attempt in range(1, MAX_REDRAWS + 1):
        if run.exercised:
            break
        redrawn = Planned(planned.number, planned.kind, f"{planned.seed}:redraw{attempt}")
        run = run_one(redrawn, out)
        run.redraws = attempt
    if not run.exercised:
        run.outcome = NOT_EXERCISED
        folder = out.resolve() / "runs" / f"{planned.number:04d}"
        (folder / "run.json").write_text(json.dumps(run_record(run), indent=1) + "\n")
    return run


def run_one(planned: Planned, out: Path) -> Run:
    """Build the planned run's scenario, execute it, check it."""
    kind = REGISTRY[planned.kind]
    rng = random.Random(planned.seed)
    tag = int(hashlib.sha256(planned.seed.encode()).hexdigest()[:8], 16)
    folder = out.resolve() / "runs" / f"{planned.number:04d}"
    context = FaultContext(
        rng=rng,
        canary=canary_for(tag),
        secret=f"sk-chaos-{rng.getrandbits(64):016x}",
        folder=folder,
    )
    scenario = kind.build(context)
    run = execute(
        scenario,
        folder,
        number=planned.number,
        kind=kind.name,
        family=kind.family,
        seed=planned.seed,
        secret=context.secret,
        canaries=(context.canary,),
    )
    check_all(run)
    (folder / "run.json").write_text(json.dumps(run_record(run), indent=1) + "\n")
    return run


def run_record(run: Run) -> dict[str, Any]:
    """A run as JSON (what `runs/NNNN/run.json` and the summary hold)."""
    return {
        "number": run.number,
        "kind": run.kind,
        "family": run.family,
        "seed": run.seed,
        "note": run.note,
        "command": run.command,
        "exit_code": run.exit_code,
        "outcome": run.outcome,
        "wall_s": round(run.wall_s, 2),
        "bound_s": round(run.bound_s, 1),
        "peak_rss_mib": round(run.peak_rss_bytes / 2**20, 1),
        "pddl_files": len(run.pddl_files),
        "faults_fired": run.faults_fired,
        "exercised": run.exercised,
        "redraws": run.redraws,
        "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in run.checks},
    }


def campaign(
    seed: int,
    runs: int,
    names: Sequence[str],
    out: Path,
    *,
    keep: bool = False,
    only: int | None = None,
    progress: Callable[[Run], None] | None = None,
) -> list[Run]:
    """Run the seeded schedule; folders of passing runs are removed unless `keep`."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for planned in schedule(seed, runs, names):
        if only is not None and planned.number != only:
            continue
        run = run_exercised(planned, out)
        if run.passed and not keep:
            folder = out / "runs" / f"{planned.number:04d}"
            for extra in folder.parent.glob(f"{folder.name}-*"):
                shutil.rmtree(extra, ignore_errors=True)
            for sub in ("tmp", "pddl", "cache", "reports", "logs"):
                shutil.rmtree(folder / sub, ignore_errors=True)
            for name in ("stdout.txt", "stderr.txt", "report.json", "graph.json"):
                (folder / name).unlink(missing_ok=True)
        done.append(run)
        if progress is not None:
            progress(run)
    return done


def summary(runs: Sequence[Run], seed: int, wall_s: float) -> dict[str, Any]:
    """The figures the table shows, as JSON."""
    failures = Counter(c.name for run in runs for c in run.checks if not c.ok)
    kinds: dict[str, dict[str, Any]] = {}
    for run in runs:
        row = kinds.setdefault(
            run.kind,
            {"family": run.family, "runs": 0, "reached": 0, "outcomes": Counter(), "violations": 0},
        )
        row["runs"] += 1
        row["reached"] += run.exercised
        row["outcomes"][run.outcome] += 1
        row["violations"] += sum(not c.ok for c in run.checks)
    return {
        "seed": seed,
        "runs": len(runs),
        "passed": sum(run.passed for run in runs),
        "not_exercised": sum(not run.exercised for run in runs),
        "redrawn": sum(run.redraws > 0 for run in runs),
        "outcomes": dict(Counter(run.outcome for run in runs)),
        "violations": {name: failures.get(name, 0) for name in INVARIANTS},
        "peak_rss_mib": round(max((r.peak_rss_bytes for r in runs), default=0) / 2**20, 1),
        "longest_wall_s": round(max((r.wall_s for r in runs), default=0.0), 1),
        "pddl_files_checked": sum(len(r.pddl_files) for r in runs),
        "wall_s": round(wall_s, 1),
        "kinds": {name: {**row, "outcomes": dict(row["outcomes"])} for name, row in kinds.items()},
        "failed_runs": [run_record(r) for r in runs if not r.passed],
    }


def table(data: dict[str, Any]) -> str:
    """The summary as a Markdown table a person reads (and pastes into a note)."""
    lines = [
        "| kind | family | runs | fault reached | outcomes | violations |",
        "|---|---|---:|---:|---|---:|",
    ]
    for name, row in data["kinds"].items():
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(row["outcomes"].items()))
        lines.append(
            f"| {name} | {row['family']} | {row['runs']} | {row['reached']} | {outcomes} "
            f"| {row['violations']} |"
        )
    lines += ["", "| invariant | runs that broke it |", "|---|---:|"]
    for name, label in TABLE_CHECKS.items():
        lines.append(f"| {label} ({name}) | {data['violations'].get(name, 0)} |")
    lines += [
        "",
        f"runs: {data['runs']}, all invariants held in {data['passed']}; not exercised "
        f"(the fault never reached them, after {MAX_REDRAWS} redraws): "
        f"{data['not_exercised']}; redrawn: {data['redrawn']}; "
        f"outcomes: {', '.join(f'{k} {v}' for k, v in sorted(data['outcomes'].items()))}",
        f"peak memory of a run (all its processes): {data['peak_rss_mib']} MiB; "
        f"longest run {data['longest_wall_s']} s; PDDL files checked: "
        f"{data['pddl_files_checked']}; wall time {data['wall_s']} s (seed {data['seed']})",
    ]
    return "\n".join(lines)


def timed(function: Callable[[], list[Run]]) -> tuple[list[Run], float]:
    started = time.monotonic()
    result = function()
    return result, time.monotonic() - started
