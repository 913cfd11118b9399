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
command in its group, and passes its exit code on.

Standard library only, and run by path (never `-m`): the worker imports it as a sibling
module so that a replan does not pay for importing cowp_ros.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

PARENT_ENV = "COWP_PLANNER_PARENT"
"""The pid of the process that asked for the plan (set by `run_with_deadline`)."""
FOLDER_ENV = "COWP_PLANNER_FOLDER"
"""The temporary folder to remove on the parent's death."""
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


def hold_on() -> None:
    """Die (cleaning up) when the parent does; at once if it already has."""
    signal.signal(signal.SIGTERM, _die)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    expected = os.environ.get(PARENT_ENV, "")
    if expected.isdigit() and os.getppid() != int(expected):
        _die()  # the parent died before the request above was in place


def main(argv: list[str]) -> int:
    """Guard mode: `lifeline.py -- COMMAND...`."""
    if not argv or argv[0] != "--" or len(argv) < 2:
        print("usage: lifeline.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    hold_on()
    child = subprocess.Popen(argv[1:])  # inherits our group, stdout and stderr
    while True:
        try:
            return child.wait()
        except InterruptedError:  # pragma: no cover - PEP 475 retries for us
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
