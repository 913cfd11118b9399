"""What one run of the harness is and leaves behind: `Scenario` in, `Run` out.

A `Scenario` is what a fault kind builds from a seeded random source: the command to
run, what the scripted model server does, when to send a signal, how long the run may
take. A `Run` is everything observed about it afterwards: exit code, wall time, output,
the report, the PDDL the planners received, peak memory, processes left behind. The
invariants (`invariants.py`) read only a `Run`, so a runner for the ROS graph can fill
the same record from a bring-up and reuse every check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.chaos.server import Responder

BASE_BOUND_S = 30.0
"""What any run may take on top of its LLM time: interpreter and imports (seconds on a
busy two-core machine), planning, writing the report."""


@dataclass(frozen=True)
class Trigger:
    """When the runner sends `signal` to the command: once the server has had
    `after_requests` chat requests, or a process whose command line holds `after_process`
    exists, and then `delay_s` later."""

    signal: int
    after_requests: int | None = None
    after_process: str | None = None
    delay_s: float = 0.3


@dataclass
class Scenario:
    """One run to make. `args` are `cowp`'s arguments; `{url}` stands for the scripted
    server's base URL. `responder` None means no server: the URL refuses connections."""

    args: list[str | bytes]
    responder: Responder | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 0.0
    """The --llm-timeout the command was given (0: it asks no model)."""
    waits_s: float = 0.0
    """Time the scenario may legitimately add (slow answers, Retry-After honoured)."""
    report: bool = False
    """`cowp run`: a report must be written, whatever the outcome."""
    key_in_url: bool = False
    kill_server_after: int | None = None
    trigger: Trigger | None = None
    note: str = ""
    max_rss_bytes: int = 0
    """What the run's processes together may hold (0: the invariants' default)."""
    expect: dict[str, float] = field(default_factory=dict)
    """Figures the run must keep (graph runs): `result_arrived` at least, and
    `cancel_latency_s` and `questions` at most, the value given."""

    @property
    def bound_s(self) -> float:
        """How long the run may take: the base, plus every call's deadline twice (a
        failing call, and the follow-up a yes/no question may need), plus waits."""
        return BASE_BOUND_S + 2 * self.timeout_s + self.waits_s


@dataclass
class Run:
    """Everything observed about one run (the graph runner fills the same fields)."""

    number: int
    kind: str
    family: str
    seed: str
    command: list[str]
    """As shown: secrets replaced by ***."""
    bound_s: float
    wall_s: float = 0.0
    exit_code: int | None = None
    """None when the harness had to kill it (it ran past its bound)."""
    stdout: bytes = b""
    stderr: bytes = b""
    output_bytes: int = 0
    """stdout and stderr together, whole (the kept text may be cut)."""
    report_expected: bool = False
    report_path: Path | None = None
    pddl_files: list[Path] = field(default_factory=list)
    written_files: list[Path] = field(default_factory=list)
    """Everything the run wrote in its folder (reports, cache, archives)."""
    secrets: tuple[str, ...] = ()
    canaries: tuple[str, ...] = ()
    peak_rss_bytes: int = 0
    leftover_processes: list[str] = field(default_factory=list)
    leftover_files: list[str] = field(default_factory=list)
    note: str = ""
    faults_fired: int | None = None
    """Requests that got the injected fault (None: not a server fault); a graph or peer
    run's own count when it reports one (`faults_fired` in its graph.json)."""
    redraws: int = 0
    """How often the campaign drew this run again because its fault was not reached."""
    checks: list[Any] = field(default_factory=list)
    """`invariants.Check` results, filled by `invariants.check_all`."""

    outcome: str = ""
    """How it ended: the report's outcome, else what the exit code says (`read_outcome`)."""
    max_rss_bytes: int = 0
    expect: dict[str, float] = field(default_factory=dict)
    observed: dict[str, Any] = field(default_factory=dict)
    """What a graph run saw (its `graph.json`), and the questions the server got."""

    def read_outcome(self) -> str:
        """The report's outcome, else what the exit says (the runner stores it in `outcome`
        before a passing run's files are removed)."""
        if self.report_path is not None and self.report_path.is_file():
            try:
                data = json.loads(self.report_path.read_text(errors="replace"))
            except ValueError:
                return "bad report"
            if isinstance(data, dict) and isinstance(data.get("outcome"), str):
                return data["outcome"]
        if self.exit_code is None:
            return "killed (hung)"
        names = {0: "ok", 1: "error", 2: "refused", 3: "no_solution", 130: "interrupted"}
        names[143] = "terminated"
        return names.get(self.exit_code, f"exit {self.exit_code}")

    @property
    def exercised(self) -> bool:
        """False when the fault never reached the run: it then proves nothing."""
        return self.faults_fired is None or self.faults_fired > 0

    @property
    def passed(self) -> bool:
        """Every invariant held, on a run its fault reached (an unexercised run is not a
        pass, whatever its checks say)."""
        return self.exercised and all(check.ok for check in self.checks)
