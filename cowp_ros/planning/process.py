"""Run a planner process with a deadline that really stops it and its children.

Fast Downward's driver starts the translator and the search as further processes, so
killing only the direct child would leave them running. Each planner therefore starts
in its own process group, and the whole group is killed when the deadline passes, or
when the caller is interrupted (Ctrl-C, SIGTERM): the caller never waits for a search
it no longer wants. And when the caller dies without a chance to clean up, the
planner's lifeline (`lifeline.py`) ends the group and removes its temporary folder.
A planner can also be started and waited for later (`start_with_deadline`, `wait_for`,
`stop`), so that the caller works on the task meanwhile (`cowp plan` parses and checks
it while Fast Downward starts on its text).
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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


@dataclass
class Running:
    """A planner process started by `start_with_deadline`, not yet waited for: its
    output goes to unnamed files in its folder (a pipe nobody reads while the caller
    parses the task would stall a planner that prints more than the pipe holds)."""

    proc: subprocess.Popen[bytes]
    deadline: float
    stdout: IO[bytes]
    stderr: IO[bytes]
    exited: int | None = None
    """A descriptor that becomes readable when the process ends (Linux's pidfd), so
    that the wait wakes at once: `Popen.wait(timeout)` polls, sleeping up to 50 ms
    between looks, which is half of a small plan's time. None: polled."""


def start_with_deadline(
    command: Sequence[str],
    timeout_s: float,
    cwd: Path,
    memory_mb: int = 0,
    env: Mapping[str, str] | None = None,
) -> Running:
    """Start `command` in `cwd` in its own session, to be waited for by `wait_for`
    (which kills its whole process group `timeout_s` seconds from now) or stopped by
    `stop`; `run_with_deadline` does both.

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
    with contextlib.ExitStack() as opened:  # closed again if the start fails
        # in the planner's own folder: a benchmark method's process may not open the
        # shared temporary folder, which holds the run's sealed ones (bench/seal.py)
        stdout = opened.enter_context(tempfile.TemporaryFile(dir=cwd))
        stderr = opened.enter_context(tempfile.TemporaryFile(dir=cwd))
        proc = subprocess.Popen(
            list(command), cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True
        )
        opened.pop_all()  # the Running holds them now
    running = Running(proc, deadline, stdout, stderr)
    try:
        _cap_memory(proc.pid, memory_mb)
        with contextlib.suppress(AttributeError, OSError):  # not Linux 5.3 or later
            running.exited = os.pidfd_open(proc.pid)
    except BaseException:
        stop(running)
        raise
    return running


def wait_for(running: Running) -> ProcessOutcome:
    """Wait for a started planner until its deadline, then kill its group; a Ctrl-C or
    SIGTERM (Terminated) while waiting stops it too, then goes on up."""
    proc = running.proc
    try:
        while True:
            left = running.deadline - time.monotonic()
            if left <= 0:
                _kill_group(proc)
                proc.wait()
                return _outcome(running, None)
            if _ended(running, min(WAKE_S, left)):
                break
    except BaseException:  # Ctrl-C, SIGTERM (Terminated): stop the search, then go
        stop(running)
        raise
    return _outcome(running, proc.returncode)


def _ended(running: Running, timeout_s: float) -> bool:
    """Whether the process ended (and was reaped) within `timeout_s`."""
    if running.exited is None:
        try:
            running.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    ready, _, _ = select.select([running.exited], [], [], timeout_s)
    if not ready:
        return False
    running.proc.wait()
    return True


def _close(running: Running) -> None:
    running.stdout.close()
    running.stderr.close()
    if running.exited is not None:
        os.close(running.exited)
        running.exited = None


def stop(running: Running) -> None:
    """Kill a started planner's whole group and wait for it (nothing is left running);
    its output is dropped. Stopping one that has ended does nothing more."""
    if running.proc.returncode is None:  # not reaped: its group id is still its own
        _kill_group(running.proc)
        running.proc.wait()
    _close(running)


def _outcome(running: Running, returncode: int | None) -> ProcessOutcome:
    texts = []
    for output in (running.stdout, running.stderr):
        output.seek(0)
        texts.append(output.read().decode("utf-8", errors="replace"))
    _close(running)
    return ProcessOutcome(returncode, texts[0], texts[1])


def run_with_deadline(
    command: Sequence[str],
    timeout_s: float,
    cwd: Path,
    memory_mb: int = 0,
    env: Mapping[str, str] | None = None,
) -> ProcessOutcome:
    """Run `command` in `cwd`; kill its whole process group after `timeout_s` seconds
    (`start_with_deadline` says what the arguments do)."""
    return wait_for(start_with_deadline(command, timeout_s, cwd, memory_mb, env))


def _cap_memory(pid: int, memory_mb: int) -> None:
    if memory_mb <= 0:
        return
    limit = memory_mb * 2**20
    with contextlib.suppress(ProcessLookupError):  # it ended already
        _, hard = resource.prlimit(pid, resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, hard))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended just now
        os.killpg(proc.pid, signal.SIGKILL)


def tail(text: str, lines: int = 8) -> str:
    """The last lines of a process's output, for an error message."""
    return "\n".join(text.strip().splitlines()[-lines:])
