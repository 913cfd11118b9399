"""An outside check of the planner: public IPC problems planned by `cowp plan`, each beside
Fast Downward's own result.

The domains are the International Planning Competition's, written by nobody on this
team. For each (domain, first problem) the script runs

- Fast Downward alone, as its users run it: `fast-downward.py --alias lama-first`
  (the driver of the installed `up-fast-downward` wheel), and
- `cowp plan --domain D --problem P` with the default planner (or `--planner`),

each as a fresh process with the same deadline (the fastest of `--repeat` runs each,
the two taking turns),
and prints per problem whether each planned, the two wall times and their ratio, and
every refusal's reason, then one closing summary line. The goal: every problem Fast
Downward solves within 60 s is planned, in at most twice its time.

Two suites:

- `downward` (the kept figure): 20 domains of the Fast Downward benchmark collection
  (github.com/aibasel/downward-benchmarks), first problem each; `--root` names a
  checkout of it (it is not installed: the collection is not on a package registry);
- `pddl-package` (the default, and CI's): the classical IPC domains the `pddl`
  package's source distribution ships in its tests, unpacked by `make setup`
  (scripts/setup.d/ipc_benchmarks.sh) into .venv/share/cowp_ipc/; some are refused
  by design (numeric fluents), with the construct and line.

    .venv/bin/python benchmarks/bench_ipc.py --suite downward --root ../downward-benchmarks \\
        --json benchmarks/results/ipc/downward.json
    .venv/bin/python benchmarks/bench_ipc.py --json benchmarks/results/ipc/pddl_package.json
    .venv/bin/python benchmarks/bench_ipc.py --planner pyperplan     # the other planner
    .venv/bin/python benchmarks/bench_ipc.py --smoke        # CI: one plan, one refusal
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from cowp_ros.planning.process import run_with_deadline

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)

DOWNWARD_SUITE: tuple[str, ...] = (
    "blocks",
    "depot",
    "driverlog",
    "elevators-sat08-strips",
    "freecell",
    "grid",
    "gripper",
    "logistics00",
    "miconic",
    "miconic-simpleadl",
    "mprime",
    "nomystery-sat11-strips",
    "parking-sat11-strips",
    "rovers",
    "satellite",
    "scanalyzer-sat11-strips",
    "sokoban-sat08-strips",
    "storage",
    "tidybot-sat11-strips",
    "zenotravel",
)
"""Twenty domains: STRIPS and typing, equality (mprime), action costs (elevators,
nomystery, parking, scanalyzer, sokoban), conditional and quantified effects
(miconic-simpleadl), types under two parents (storage), upper-case PDDL (blocks), and
the grounding-bound cases (logistics, zenotravel, freecell, grid, mystery's kin)."""

PDDL_PACKAGE_SUITE: tuple[str, ...] = (
    "barman-sequential-optimal",
    "cave-diving-sequential-optimal",
    "childsnack",
    "maintenance-sequential-satisficing-ipc2014",
    "sokoban-sequential-optimal",
    "storage",
    "block-grouping",
    "depots-numeric-automatic",
    "drone",
    "social-planning",
)
"""The `pddl` package's IPC folders that setup unpacks (its others are FOND)."""


def pddl_package_root() -> Path:
    """Where setup unpacked the `pddl` package's IPC problems (the pinned version)."""
    pins = (REPO / "requirements" / "core.txt").read_text().splitlines()
    version = next(line.split("==")[1].split()[0] for line in pins if line.startswith("pddl=="))
    return VENV / "share" / "cowp_ipc" / f"pddl-{version}"


def first_problem(folder: Path) -> tuple[Path, Path]:
    """The domain file and the first problem of a benchmark folder (name order), with
    the per-problem domain files some collections have (`p01-domain.pddl`)."""
    problem = sorted(p for p in folder.glob("*.pddl") if "domain" not in p.name)[0]
    for candidate in (
        folder / "domain.pddl",
        folder / f"{problem.stem.split('-')[0]}-domain.pddl",
        folder / f"domain_{problem.name}",
    ):
        if candidate.is_file():
            return candidate, problem
    raise SystemExit(f"no domain file for {problem}")


def fd_driver() -> Path:
    from cowp_ros.planning.fast_downward import driver_path

    driver = driver_path()
    if driver is None:
        raise SystemExit("Fast Downward (up-fast-downward) is not installed")
    return driver


@dataclass
class Run:
    """One process's answer: planned or not, its wall time, plan length and cost, and
    the reason when it did not plan."""

    planned: bool
    seconds: float
    steps: int | None = None
    cost: int | None = None
    reason: str = ""


def run_fast_downward(domain: Path, problem: Path, timeout_s: float) -> Run:
    """Fast Downward alone, as its users run it (`--alias lama-first`)."""
    with tempfile.TemporaryDirectory(prefix="bench_ipc_fd_") as tmp:
        plan = Path(tmp) / "plan.txt"
        command = [sys.executable, str(fd_driver()), "--alias", "lama-first"]
        command += ["--plan-file", str(plan), str(domain), str(problem)]
        started = time.perf_counter()
        # the planners' own runner: its own session, killed whole at the deadline (the
        # driver's search is a child process, which a timeout that killed the driver
        # alone left searching, gigabytes of it)
        done = run_with_deadline(command, timeout_s, Path(tmp))
        seconds = time.perf_counter() - started
        if done.timed_out:
            return Run(False, seconds, reason=f"no plan in {timeout_s:g} s")
        if done.returncode != 0 or not plan.is_file():
            lines = (done.stdout + done.stderr).strip().splitlines()
            return Run(False, seconds, reason=f"exit {done.returncode}: {' '.join(lines[-2:])}")
        text = plan.read_text().splitlines()
        steps = sum(1 for line in text if line.startswith("("))
        cost = next((int(line.split()[3]) for line in text if line.startswith("; cost =")), None)
        return Run(True, seconds, steps, cost)


def run_cowp(domain: Path, problem: Path, timeout_s: float, planner: str | None) -> Run:
    """`cowp plan --domain D --problem P` as a user runs it, in a process of its own."""
    command = [str(VENV / "bin" / "cowp"), "plan", "--domain", str(domain)]
    command += ["--problem", str(problem), "--timeout", f"{timeout_s:g}"]
    if planner:
        command += ["--planner", planner]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s + 30, check=False
        )
    except subprocess.TimeoutExpired:
        return Run(False, time.perf_counter() - started, reason="cowp plan did not end")
    seconds = time.perf_counter() - started
    lines = done.stdout.splitlines()
    if done.returncode == 0:
        steps = sum(1 for line in lines if line.startswith("  ") and line.strip()[:1].isdigit())
        header = next((line for line in lines if line.startswith("plan by")), "")
        cost = header.split(", cost ")[1].split(")")[0] if ", cost " in header else ""
        return Run(True, seconds, steps, int(cost) if cost.isdigit() else None)
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    first = next((i for i, line in enumerate(said) if "error:" in line or "no plan" in line), 0)
    reason = " / ".join(said[first : first + 6])
    if "Traceback" in done.stderr:
        reason = "a stack trace: " + (said[-1] if said else "")
    return Run(False, seconds, reason=reason or f"exit {done.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=["pddl-package", "downward"], default="pddl-package")
    parser.add_argument("--root", type=Path, help="the suite's folder (downward: a checkout)")
    parser.add_argument("--domains", help="comma-separated folders (default: the suite's)")
    parser.add_argument("--timeout", type=float, default=60.0, help="deadline of each run")
    parser.add_argument("--planner", default=None, help="cowp plan --planner (default: its)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each process per problem, the fastest kept (the machine is shared: "
        "one run's time holds other people's load)",
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--smoke", action="store_true", help="CI: two problems of the pddl package, once each"
    )
    args = parser.parse_args()
    if args.smoke:
        args.suite, args.repeat, args.timeout = "pddl-package", 1, 30.0
        args.domains = args.domains or "childsnack,block-grouping"
    if args.suite == "downward":
        if args.root is None:
            parser.error("--suite downward needs --root (a checkout of downward-benchmarks)")
        root, suite = args.root, DOWNWARD_SUITE
    else:
        root, suite = args.root or pddl_package_root(), PDDL_PACKAGE_SUITE
    if not root.is_dir():
        raise SystemExit(f"{root}: no such folder (make setup unpacks the pddl package's)")
    names = args.domains.split(",") if args.domains else list(suite)
    load_at_start = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    print(f"{'problem':52s} {'cowp':>8s} {'FD':>8s} {'ratio':>6s}  outcome")
    for name in names:
        domain, problem = first_problem(root / name)
        fd, cowp = _fastest_pair(
            partial(run_fast_downward, domain, problem, args.timeout),
            partial(run_cowp, domain, problem, args.timeout, args.planner),
            args.repeat,
        )
        ratio = cowp.seconds / fd.seconds if fd.planned and cowp.planned else None
        label = f"{name}/{problem.name}"
        if cowp.planned:
            outcome = f"planned ({cowp.steps} steps"
            outcome += f", cost {cowp.cost}" if cowp.cost is not None else ""
            outcome += f"; FD {fd.steps}"
            outcome += f", cost {fd.cost})" if fd.cost is not None else ")"
            if not fd.planned:
                outcome += f"; FD did not: {fd.reason}"
        else:
            outcome = f"NOT planned: {cowp.reason}"
            outcome += "; FD did not either" if not fd.planned else "; FD planned"
        shown_ratio = f"{ratio:5.2f}x" if ratio is not None else "     -"
        print(f"{label:52s} {cowp.seconds:7.2f}s {fd.seconds:7.2f}s {shown_ratio}  {outcome}")
        rows.append(
            {
                "domain": name,
                "problem": problem.name,
                "cowp": asdict(cowp),
                "fast_downward": asdict(fd),
                "ratio": ratio,
            }
        )
    solved_by_fd = [r for r in rows if r["fast_downward"]["planned"]]
    planned = [r for r in solved_by_fd if r["cowp"]["planned"]]
    within = [r for r in planned if r["ratio"] is not None and r["ratio"] <= 2.0]
    refused = [r for r in rows if not r["cowp"]["planned"]]
    ratios: list[float] = sorted(r["ratio"] for r in planned if r["ratio"] is not None)
    median = ratios[len(ratios) // 2] if ratios else None
    summary = (
        f"summary: {len(planned)} of the {len(solved_by_fd)} problems Fast Downward solves "
        f"planned by cowp plan, {len(within)} within twice its time"
        + (f" (median {median:.2f}x)" if median is not None else "")
        + f"; {len(refused)} of {len(rows)} not planned"
    )
    print(summary)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "command": " ".join(
                [Path(sys.executable).name, "benchmarks/bench_ipc.py", *sys.argv[1:]]
            ),
            "suite": args.suite,
            "source": "github.com/aibasel/downward-benchmarks (first problem of each folder)"
            if args.suite == "downward"
            else f"the pddl package's source distribution, tests/fixtures ({root.name})",
            "commit": _commit(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
            f"load {load_at_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end",
            "timeout_s": args.timeout,
            "repeat": args.repeat,
            "planner": args.planner or "default",
            "summary": summary,
            "problems": rows,
        }
        args.json.write_text(json.dumps(record, indent=1) + "\n")
    return 0


def _fastest_pair(
    fast_downward: Callable[[], Run], cowp: Callable[[], Run], repeat: int
) -> tuple[Run, Run]:
    """The fastest of `repeat` runs of each, the two taking turns, so that a burst of
    the shared machine's load falls on both rather than on the three runs of one; a
    side that did not plan runs once (a refusal or a timeout says the same each time)."""
    best = [fast_downward(), cowp()]
    for _ in range(repeat - 1):
        for side, run in enumerate((fast_downward, cowp)):
            if best[side].planned:
                again = run()
                if again.planned and again.seconds < best[side].seconds:
                    best[side] = again
    return best[0], best[1]


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
