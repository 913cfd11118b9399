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
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
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


GUARD_FLAGS = ("-s", "-S", "-P")
"""The guard's interpreter: no site packages to import (-S, -s), and not its own
folder on `sys.path` (-P), but the environment's `PYTHONPATH` and `PYTHONHASHSEED`,
which a `--module` step it runs in its own process needs (`lifeline.py`)."""


def guarded(command: Sequence[str]) -> list[str]:
    """`command` run under the lifeline guard (for planners that are not our code)."""
    return [sys.executable, *GUARD_FLAGS, str(LIFELINE), "--", *command]


WAKE_S = 0.2
"""How often the wait for a planner returns to Python. A Ctrl-C or SIGTERM may be
delivered to any thread of the process (numpy's BLAS pool is one), and then it does not
interrupt the main thread's blocking wait: only Python, running again, raises it. Short
waits make that happen within WAKE_S instead of at the planner's deadline."""


def run_with_deadline(
    command: Sequence[str],
    timeout_s: float,
    cwd: Path,
    memory_mb: int = 0,
    env: Mapping[str, str] | None = None,
) -> ProcessOutcome:
    """Run `command` in `cwd`; kill its whole process group after `timeout_s` seconds.

    `memory_mb` (0: none) caps the process's address space (RLIMIT_AS), set as soon as
    it exists, before it has started a child or allocated much: its children inherit
    the cap. It is set from here (`prlimit`), not in a `preexec_fn`, which is unsafe in
    a multithreaded caller such as a ROS node.

    `env` adds variables to the planner's environment (Fast Downward's translator
    finds its package by `PYTHONPATH`). `cwd` is the planner's temporary folder: its
    lifeline removes it if this process dies. `PYTHONHASHSEED=0` makes a Python
    planner's set iteration, and so its choice among equally good plans, the same on
    every run: replanning twice gives the same plan.
    """
    env = {
        **os.environ,
        **(env or {}),
        "PYTHONHASHSEED": "0",
        lifeline.PARENT_ENV: str(os.getpid()),
        lifeline.FOLDER_ENV: str(cwd),
        lifeline.MEMORY_ENV: str(max(0, memory_mb)),
    }
    deadline = time.monotonic() + timeout_s
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
            _cap_memory(proc.pid, memory_mb)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    _kill_group(proc)
                    stdout, stderr = proc.communicate()
                    return ProcessOutcome(None, stdout, stderr)
                try:  # retrying communicate() after its timeout loses no output
                    stdout, stderr = proc.communicate(timeout=min(WAKE_S, left))
                    break
                except subprocess.TimeoutExpired:
                    continue
        except BaseException:  # Ctrl-C, SIGTERM (Terminated): stop the search, then go
            _kill_group(proc)
            proc.wait()
            raise
        return ProcessOutcome(proc.returncode, stdout, stderr)


def _cap_memory(pid: int, memory_mb: int) -> None:
    if memory_mb <= 0:
        return
    limit = memory_mb * 2**20
    with contextlib.suppress(ProcessLookupError):  # it ended already
        _, hard = resource.prlimit(pid, resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, hard))


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended just now
        os.killpg(proc.pid, signal.SIGKILL)


def tail(text: str, lines: int = 8) -> str:
    """The last lines of a process's output, for an error message."""
    return "\n".join(text.strip().splitlines()[-lines:])
