"""The invariants every run must keep, whatever was injected, as checks over a `Run`.

Each check reads only the run's record and outputs, never how it was produced, so the
ROS graph's runner can use them unchanged. A check returns a `Check`: its name, whether
it held, and the evidence when it did not.

- ended_in_time: the run ended by itself within its configured bound;
- clean_exit: a documented exit code, and no traceback;
- strict_report: where a report is due, it exists, is strict JSON (no NaN), has an
  outcome and events, and is at most MAX_REPORT_BYTES;
- no_injection: no injected token in any PDDL file a planner received, and each file
  parses;
- no_secret: no API key anywhere in the output, the report or any file the run wrote;
- nothing_left: no process of the run alive afterwards, no temporary file left;
- bounded_memory: the run's processes together stayed under MAX_RSS_BYTES;
- terminal_safe: output holds no escape or control characters, and is not huge;
- kept_expectations: a graph run's result arrived, its cancel was honoured within a
  second, its flood cost at most its bound of questions; a peer run's attack was
  refused at once, and a capped planner worker stayed under its cap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.chaos.record import Run

ALLOWED_EXIT_CODES = frozenset({0, 1, 2, 3, 130, 143})
"""ok, a CowpError, argparse refused, no solution, Ctrl-C, SIGTERM."""
AT_LEAST = frozenset({"result_arrived", "refused"})
"""Expectations that are minimums (a result arrived, a peer's attack was refused); the
others are maximums."""
MAX_REPORT_BYTES = 2 * 2**20
MAX_RSS_BYTES = 512 * 2**20
MAX_OUTPUT_BYTES = 256 * 1024
_UNSAFE = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]")


@dataclass(frozen=True)
class Check:
    """One invariant's verdict on one run."""

    name: str
    ok: bool
    detail: str = ""


Invariant = Callable[[Run], Check]
INVARIANTS: dict[str, Invariant] = {}


def invariant(function: Invariant) -> Invariant:
    """Register an invariant under its function name."""
    INVARIANTS[function.__name__] = function
    return function


def check_all(run: Run) -> list[Check]:
    """Run every invariant on `run`, keep the verdicts on it, and return them."""
    run.checks = [check(run) for check in INVARIANTS.values()]
    return run.checks


@invariant
def ended_in_time(run: Run) -> Check:
    if run.exit_code is None:
        return Check("ended_in_time", False, f"killed after {run.wall_s:.1f} s: it hung")
    ok = run.wall_s <= run.bound_s
    return Check("ended_in_time", ok, "" if ok else f"{run.wall_s:.1f} s > {run.bound_s:.1f} s")


@invariant
def clean_exit(run: Run) -> Check:
    if run.exit_code is None:
        return Check("clean_exit", False, "no exit: killed by the harness")
    if b"Traceback (most recent call last)" in run.stderr + run.stdout:
        tail = run.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
        return Check("clean_exit", False, f"traceback: {' '.join(tail)[:200]}")
    if run.exit_code not in ALLOWED_EXIT_CODES:
        return Check("clean_exit", False, f"exit code {run.exit_code}")
    return Check("clean_exit", True)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-strict JSON constant {name}")


def read_strict_json(path: Path) -> Any:
    """Parse a file as strict JSON (NaN and Infinity refused); raises ValueError."""
    return json.loads(path.read_bytes().decode("utf-8"), parse_constant=_refuse_constant)


@invariant
def strict_report(run: Run) -> Check:
    if not run.report_expected:
        return Check("strict_report", True, "no report due")
    path = run.report_path
    if path is None or not path.is_file():
        return Check("strict_report", False, "no report written")
    size = path.stat().st_size
    if size > MAX_REPORT_BYTES:
        return Check("strict_report", False, f"report of {size:,} bytes")
    try:
        data = read_strict_json(path)
    except (ValueError, UnicodeDecodeError) as err:
        return Check("strict_report", False, f"not strict JSON: {str(err)[:120]}")
    if not isinstance(data, dict) or not isinstance(data.get("outcome"), str):
        return Check("strict_report", False, "no outcome")
    events = data.get("events")  # every run's report has them (cowp/report.py)
    if not isinstance(events, list):
        return Check("strict_report", False, "no events list")
    return Check("strict_report", True)


@invariant
def no_injection(run: Run) -> Check:
    from cowp_ros.errors import CowpError
    from cowp_ros.pddl import PlanningTask

    domains = sorted(p for p in run.pddl_files if p.name.endswith("-domain.pddl"))
    for path in run.pddl_files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for canary in run.canaries:
            if canary in text:
                return Check("no_injection", False, f"{canary!r} in {path.name}")
    for domain in domains:
        problem = domain.with_name(domain.name.replace("-domain.pddl", "-problem.pddl"))
        try:
            PlanningTask.load(domain, problem)
        except CowpError as err:
            return Check("no_injection", False, f"{domain.name} does not parse: {err.message}")
    return Check("no_injection", True, f"{len(run.pddl_files)} PDDL files")


@invariant
def no_secret(run: Run) -> Check:
    places: list[tuple[str, bytes]] = [("stdout", run.stdout), ("stderr", run.stderr)]
    for path in run.written_files:
        try:
            places.append((path.name, path.read_bytes()))
        except OSError:
            continue
    for secret in run.secrets:
        needle = secret.encode()
        for where, data in places:
            if needle in data:
                return Check("no_secret", False, f"a key in {where}")
    return Check("no_secret", True)


@invariant
def nothing_left(run: Run) -> Check:
    if run.leftover_processes:
        return Check("nothing_left", False, f"left running: {run.leftover_processes[0][:160]}")
    if run.leftover_files:
        return Check("nothing_left", False, f"left in TMPDIR: {', '.join(run.leftover_files)}")
    return Check("nothing_left", True)


@invariant
def bounded_memory(run: Run) -> Check:
    bound = run.max_rss_bytes or MAX_RSS_BYTES
    ok = run.peak_rss_bytes <= bound
    detail = f"{run.peak_rss_bytes / 2**20:.0f} MiB"
    return Check("bounded_memory", ok, detail if ok else f"{detail} > {bound >> 20} MiB")


@invariant
def terminal_safe(run: Run) -> Check:
    if run.output_bytes > MAX_OUTPUT_BYTES:
        return Check("terminal_safe", False, f"{run.output_bytes:,} bytes of output")
    found = _UNSAFE.search(run.stdout + run.stderr)
    if found:
        return Check("terminal_safe", False, f"control character {found.group()!r} printed")
    return Check("terminal_safe", True)


@invariant
def kept_expectations(run: Run) -> Check:
    """A graph run's own figures: a result arrived, a cancel was honoured in time, a
    flood cost at most so many questions (nothing is expected of other runs)."""
    seen = run.observed
    for name, bound in run.expect.items():
        value = seen.get(name)
        if not isinstance(value, int | float):
            return Check("kept_expectations", False, f"{name}: not measured")
        if name in AT_LEAST and value < bound:
            return Check("kept_expectations", False, f"{name} {value:g} < {bound:g}")
        if name not in AT_LEAST and value > bound:
            return Check("kept_expectations", False, f"{name} {value:g} > {bound:g}")
        if name == "cancel_latency_s" and seen.get("outcome") != "canceled":
            return Check("kept_expectations", False, f"canceled run ended {seen.get('outcome')}")
    shown = ", ".join(f"{k} {seen[k]}" for k in run.expect if k in seen)
    return Check("kept_expectations", True, shown)
