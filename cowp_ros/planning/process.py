"""Run a planner process with a deadline that really stops it and its children.

Fast Downward's driver starts the translator and the search as further processes, so
killing only the direct child would leave them running. Each planner therefore starts
in its own process group, and the whole group is killed when the deadline passes, or
when the caller is interrupted (Ctrl-C, SIGTERM): the caller never waits for a search
it no longer wants. And when the caller dies without a chance to clean up, the
planner's lifeline (`lifeline.py`) ends the group and removes its temporary folder.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cowp_ros.planning import lifeline

LIFELINE = Path(lifeline.__file__)


@dataclass(frozen=True)
class ProcessOutcome:
    """Exit code (None when killed at the deadline) and what the process printed."""

    returncode: int | None
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def guarded(command: Sequence[str]) -> list[str]:
    """`command` run under the lifeline guard (for planners that are not our code)."""
    return [sys.executable, "-I", "-S", str(LIFELINE), "--", *command]


def run_with_deadline(command: Sequence[str], timeout_s: float, cwd: Path) -> ProcessOutcome:
    """Run `command` in `cwd`; kill its whole process group after `timeout_s` seconds.

    `cwd` is the planner's temporary folder: its lifeline removes it if this process
    dies. `PYTHONHASHSEED=0` makes a Python planner's set iteration, and so its choice
    among equally good plans, the same on every run: replanning twice gives the same plan.
    """
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        lifeline.PARENT_ENV: str(os.getpid()),
        lifeline.FOLDER_ENV: str(cwd),
    }
    with subprocess.Popen(
        list(command),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            return ProcessOutcome(None, stdout, stderr)
        except BaseException:  # Ctrl-C, SIGTERM (Terminated): stop the search, then go
            _kill_group(proc)
            proc.wait()
            raise
        return ProcessOutcome(proc.returncode, stdout, stderr)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended just now
        os.killpg(proc.pid, signal.SIGKILL)


def tail(text: str, lines: int = 8) -> str:
    """The last lines of a process's output, for an error message."""
    return "\n".join(text.strip().splitlines()[-lines:])
