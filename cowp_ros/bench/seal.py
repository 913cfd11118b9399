"""The seal on a method's process: no draw seed, no judge, no dataset, no kept records.

A method that knows the trial's draw seed and can read the situation dataset and the
judge files can draw the trial again: the situations still to come, their effects and
the stand-ins the judge accepts. The boundary (`boundary.py`) keeps the runner's objects
out of the method's process; this module keeps the disk out of it, and the seed:

- `method_seed`: the seed a method gets (`MethodContext.seed`) is a one-way hash of
  the trial's draw seed and the method's name. Methods that draw anything at random
  (EK's covered kinds) still draw the same in every run of the trial; none can go back
  to the draw seed (sha-256), so none can re-draw the schedule from it.
- `install`: an audit hook (PEP 578) in the method's process, installed before the
  first job arrives, refuses to open anything under the sealed folders (the judge
  files, the dataset, the run's own folder where earlier methods' records of the same
  trial lie, the kept results), by any path that resolves there (symbolic links
  included), to link or rename them elsewhere, to open another process's `/proc`
  files (the runner's memory), to start a program (`cat` would read them for it) other
  than the planners the methods plan with (pyperplan's worker, Fast Downward under its
  lifeline, given no sealed path), and to look up libc's file and process calls
  through ctypes.

An audit hook is not an operating-system sandbox: a method that rewrote the
interpreter's memory through ctypes could lift it, in plain sight in its source; the
import test (`test/bench/test_leaks.py`) reads every method package for that, and the
attack test tries the rest. What the hook guarantees is that no ordinary Python way of
reading a file reaches the answers.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cowp_ros.bench.annotations import DEFAULT_DIR as JUDGE_DIR
from cowp_ros.bench.view import MethodLeakError
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.planning.lifeline import MODULE, STDIN, THEN
from cowp_ros.planning.process import GUARD_FLAGS, LIFELINE
from cowp_ros.planning.pyperplan_planner import WORKER as PYPERPLAN_WORKER

RESULTS_DIR = JUDGE_DIR.parent / "results"
"""The kept runs: their archives hold every trial's schedule."""

_PATH_EVENTS = {
    "open": 0,
    "os.link": 0,
    "os.rename": 0,
    "os.symlink": 0,
    "os.truncate": 0,
    "shutil.copyfile": 0,
    "shutil.copytree": 0,
    "shutil.move": 0,
    "sqlite3.connect": 0,
}
"""Audit events that name a path (at this argument) a method could read sealed data by."""

_PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
     "os.forkpty", "pty.spawn", "os.startfile"}
)  # fmt: skip
"""Starting a program: it would read the files without this process's hook."""

_LIBC_CALLS = frozenset(
    {"open", "open64", "openat", "openat64", "openat2", "fopen", "fopen64", "freopen",
     "creat", "syscall", "execve", "execv", "execvp", "execl", "execlp", "system", "popen",
     "posix_spawn", "posix_spawnp", "fork", "vfork", "clone", "link", "linkat", "symlink",
     "rename", "renameat", "process_vm_readv", "ptrace", "audit_hook"}
)  # fmt: skip
"""libc functions that would open, start or read around the hook when called by ctypes."""

_OTHER_PROC = re.compile(r"^/proc/(\d+)(/|$)")


def method_seed(draw_seed: int, method: str) -> int:
    """The seed a method gets for a trial: fixed per (trial, method), and no way back to
    the draw seed (see the module docstring)."""
    digest = hashlib.sha256(f"method-seed/{draw_seed}/{method}".encode()).hexdigest()
    return int(digest[:12], 16)


def sealed_roots(extra: Iterable[str | Path] = ()) -> tuple[str, ...]:
    """The folders no method may read: the judge files, the kept results, the default
    dataset, and `extra` (this run's dataset, judge folder and output folder)."""
    roots = {JUDGE_DIR, RESULTS_DIR, default_dataset_dir(), *(Path(p) for p in extra)}
    return tuple(sorted({os.path.realpath(p) for p in roots if str(p)}))


class SealedPathError(MethodLeakError):
    """A method tried to read, link or run past the seal."""


def _resolved(path: Any) -> str | None:
    if isinstance(path, int) or path is None:
        return None  # an open file descriptor: what it names was checked when it opened
    try:
        return os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def _ancestor_of_one(path: str, roots: tuple[str, ...]) -> bool:
    """A folder holding a sealed one: opening it as a descriptor would let `dir_fd`
    reach below it by a relative path the hook never sees resolved."""
    return any(r.startswith(path.rstrip(os.sep) + os.sep) for r in roots) and os.path.isdir(path)


def planner_command(argv: Any, roots: tuple[str, ...]) -> bool:
    """Whether `argv` starts one of the planners a method plans with, on no sealed file:
    pyperplan's worker, or Fast Downward's translator then search under the lifeline."""
    if not isinstance(argv, list | tuple) or not argv:
        return False
    words = [os.fsdecode(a) for a in argv]
    if any(_inside(os.path.realpath(w), roots) for w in words if os.path.sep in w):
        return False
    if words[0] != sys.executable:
        return False
    if words[1:2] == [str(PYPERPLAN_WORKER)]:
        return True
    lifeline = [*GUARD_FLAGS, str(LIFELINE), "--", MODULE, "fast_downward.translate"]
    if words[1 : 1 + len(lifeline)] != lifeline or THEN not in words:
        return False
    search = words[words.index(THEN) + 1 :]
    return search[:1] == [STDIN] and len(search) > 2 and search[2].endswith("/downward")


def check(event: str, args: tuple[Any, ...], roots: tuple[str, ...], own_pid: int) -> None:
    """Raise SealedPathError if the audit event would reach past the seal."""
    if event == "subprocess.Popen" and len(args) > 1 and planner_command(args[1], roots):
        return
    if event in _PROCESS_EVENTS:
        raise SealedPathError(
            f"a benchmark method may not start a program ({event}): it would read the "
            "judge's files past this process's seal",
            hint="a method sees the trial through the robot's view only",
        )
    if event == "ctypes.dlsym" and len(args) > 1 and str(args[1]) in _LIBC_CALLS:
        raise SealedPathError(
            f"a benchmark method may not call libc's {args[1]!r} through ctypes",
            hint="a method sees the trial through the robot's view only",
        )
    position = _PATH_EVENTS.get(event)
    if position is None or len(args) <= position:
        return
    path = _resolved(args[position])
    if path is None:
        return
    other = _OTHER_PROC.match(path)
    sealed = _inside(path, roots) or (event == "open" and _ancestor_of_one(path, roots))
    if sealed or (other is not None and int(other.group(1)) != own_pid):
        raise SealedPathError(
            f"a benchmark method may not read {path}: the judge files, the dataset, the "
            "run's records and other processes are sealed from the method's process",
            hint="a method sees the trial through the robot's view only; outside knowledge "
            "it needs is handed to it in context.options",
        )


def install(roots: tuple[str, ...]) -> None:
    """Seal this process (the method's worker): from now on `check` vets every audited
    file, process and ctypes event. Cannot be undone in the process."""
    own_pid = os.getpid()
    frozen = tuple(roots)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        check(event, args, frozen, own_pid)

    sys.addaudithook(hook)
