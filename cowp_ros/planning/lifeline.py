"""A planner process's lifeline: it ends, and removes its folder, when its parent dies.

Planners run in their own session so that a deadline can kill the whole group at once
(`process.run_with_deadline`). The other side of that: nothing ends them when the
process that asked for the plan dies without cleaning up (SIGKILL, a crash in native
code), and a search can go on at full CPU for minutes with its temporary folder left
behind. So every planner process asks Linux for SIGTERM when its parent dies
(`PR_SET_PDEATHSIG`, as the embedded LLM server does) and handles it by removing the
folder the parent made for it and killing its own process group (Fast Downward's
translator and search are in it).

The pyperplan worker calls `hold_on()` first thing. Fast Downward is not our code, so it
runs under this file as a guard: `python lifeline.py -- COMMAND...` holds on, runs the
command in its group, and passes its exit code on. `-- A... --then [--stdin FILE] B...`
runs B (reading FILE) only once A has ended with 0, and passes on the first non-zero
code: Fast Downward's translator then its search, as its driver script runs them, at
the cost of one interpreter fewer (`fast_downward.py`). A command `--module NAME ARGS`
is `python -m NAME ARGS` run in a fork of the guard itself: the translator starts
without an interpreter of its own to start (15 ms of a 0.1 s plan), and its memory
goes back when it ends, before the search starts. The guard is started with the
interpreter's flags the module needs (`process.guarded`): its `PYTHONPATH` and
`PYTHONHASHSEED` (0, so that the translator's output, and the plan, are the same on
every run).

Standard library only, and run by path (never `-m`): the worker imports it as a sibling
module so that a replan does not pay for importing cowp_ros.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import runpy
import shutil
import signal
import subprocess
import sys
from pathlib import Path

PARENT_ENV = "COWP_PLANNER_PARENT"
"""The pid of the process that asked for the plan (set by `run_with_deadline`)."""
FOLDER_ENV = "COWP_PLANNER_FOLDER"
"""The temporary folder to remove on the parent's death."""
MEMORY_ENV = "COWP_PLANNER_MEMORY_MB"
"""The address-space cap (MB) the planner process sets on itself before it starts
anything: the parent's `prlimit` comes just after the process exists, and a guard that
starts its command at once could otherwise have started it uncapped."""
FOLDER_PREFIX = "cowp_"
"""Only folders with this name prefix are removed (a wrong variable removes nothing)."""
PR_SET_PDEATHSIG = 1


def _die(signum: int = signal.SIGTERM, frame: object = None) -> None:
    folder = os.environ.get(FOLDER_ENV, "")
    if folder and Path(folder).name.startswith(FOLDER_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)
    if os.getpgrp() == os.getpid():  # we lead our group: take the whole group along
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)
    os._exit(128 + signal.SIGTERM)


def _cap_memory() -> None:
    text = os.environ.get(MEMORY_ENV, "")
    if not text.isdigit() or int(text) <= 0:
        return
    limit = int(text) * 2**20
    with contextlib.suppress(OSError, ValueError):
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def hold_on() -> None:
    """Cap this process's memory (`MEMORY_ENV`), and die (cleaning up) when the parent
    does; at once if it already has."""
    _cap_memory()
    signal.signal(signal.SIGTERM, _die)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    expected = os.environ.get(PARENT_ENV, "")
    if expected.isdigit() and os.getppid() != int(expected):
        _die()  # the parent died before the request above was in place


THEN = "--then"
STDIN = "--stdin"
MODULE = "--module"


def _commands(argv: list[str]) -> list[tuple[list[str], str | None]] | None:
    """`-- A... --then [--stdin FILE] B...` as (command, stdin file) pairs."""
    if not argv or argv[0] != "--" or len(argv) < 2:
        return None
    commands: list[tuple[list[str], str | None]] = []
    current: list[str] = []
    stdin: str | None = None
    words = iter(argv[1:])
    for word in words:
        if word == THEN:
            commands.append((current, stdin))
            current, stdin = [], None
        elif word == STDIN and not current:
            stdin = next(words, None)
        else:
            current.append(word)
    commands.append((current, stdin))
    return commands if all(command for command, _ in commands) else None


def _run(command: list[str], stdin: str | None) -> int:
    if command[0] == MODULE and len(command) > 1:
        return _run_module(command[1], command[2:], stdin)
    with open(stdin, "rb") if stdin else contextlib.nullcontext() as source:
        child = subprocess.Popen(command, stdin=source)  # our group, stdout and stderr
        while True:
            try:
                return child.wait()
            except InterruptedError:  # pragma: no cover - PEP 475 retries for us
                continue


def _run_module(name: str, args: list[str], stdin: str | None) -> int:
    """`python -m NAME ARGS` in a fork of this process, its exit code as `_run` gives it
    (negative: the signal that ended it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            if stdin:
                os.dup2(os.open(stdin, os.O_RDONLY), 0)
            sys.argv = [name, *args]
            runpy.run_module(name, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as done:
            code = _exit_code(done.code)
        except BaseException:  # as the interpreter would: the trace, and exit 1
            import traceback

            traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status)
        except InterruptedError:  # pragma: no cover - PEP 475 retries for us
            continue


def _exit_code(code: object) -> int:
    """The exit status `sys.exit(code)` gives a process."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    """Guard mode: `lifeline.py -- COMMAND... [--then [--stdin FILE] COMMAND...]`, a
    COMMAND being a program and its arguments or `--module NAME ARGS...`."""
    commands = _commands(argv)
    if commands is None:
        print(
            "usage: lifeline.py -- COMMAND [ARGS...] [--then [--stdin FILE] COMMAND...]",
            file=sys.stderr,
        )
        return 2
    hold_on()
    for command, stdin in commands:
        code = _run(command, stdin)
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
