"""Run a planner process with a deadline that really stops it and its children.

Fast Downward's driver starts the translator and the search as further processes, so
killing only the direct child would leave them running. Each planner therefore starts
in its own process group, and the whole group is killed when the deadline passes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcessOutcome:
    """Exit code (None when killed at the deadline) and what the process printed."""

    returncode: int | None
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_with_deadline(command: Sequence[str], timeout_s: float, cwd: Path) -> ProcessOutcome:
    """Run `command` in `cwd`; kill its whole process group after `timeout_s` seconds.

    `PYTHONHASHSEED=0` makes a Python planner's set iteration, and so its choice among
    equally good plans, the same on every run: replanning twice gives the same plan.
    """
    with subprocess.Popen(
        list(command),
        cwd=cwd,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # it ended just now
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            return ProcessOutcome(None, stdout, stderr)
        return ProcessOutcome(proc.returncode, stdout, stderr)


def tail(text: str, lines: int = 8) -> str:
    """The last lines of a process's output, for an error message."""
    return "\n".join(text.strip().splitlines()[-lines:])
