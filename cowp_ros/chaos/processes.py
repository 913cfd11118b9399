"""Which processes a run left behind, found by a marker in their environment (Linux).

Every process a run starts inherits its environment, also across `setsid` and double
forks that escape the process tree. So the harness puts `COWP_CHAOS_MARK=<run id>` in
the environment of the command it runs, and afterwards any process whose
`/proc/PID/environ` holds that entry is one the run left behind (an orphan), whatever
its parent now is. Resident memory is read the same way, for the whole family at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MARK_ENV = "COWP_CHAOS_MARK"
PROC = Path("/proc")


@dataclass(frozen=True)
class Found:
    """A live process of a run: its pid, command line and resident memory."""

    pid: int
    command: str
    rss_bytes: int


def _environ_has(pid: int, entry: bytes) -> bool:
    try:
        data = (PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, or not ours to read
        return False
    return entry in data.split(b"\0")


def _rss(pid: int) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", errors="replace").strip()[:300]


def _is_zombie(pid: int) -> bool:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def marked(mark: str) -> list[Found]:
    """Live (not zombie) processes whose environment holds `COWP_CHAOS_MARK=mark`."""
    entry = f"{MARK_ENV}={mark}".encode()
    found = []
    me = os.getpid()
    for child in PROC.iterdir():
        if not child.name.isdigit() or int(child.name) == me:
            continue
        pid = int(child.name)
        if _environ_has(pid, entry) and not _is_zombie(pid):
            found.append(Found(pid, _command(pid), _rss(pid)))
    return found


def family_rss(mark: str) -> int:
    """Resident memory of all of a run's live processes together, in bytes."""
    return sum(process.rss_bytes for process in marked(mark))


def wait_until_gone(mark: str, timeout_s: float) -> list[Found]:
    """Poll until no process of the run is left, or `timeout_s`; returns what is left."""
    deadline = time.monotonic() + timeout_s
    left = marked(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = marked(mark)
    return left


def wait_for(mark: str, needle: str, timeout_s: float) -> Found | None:
    """The first process of the run whose command line holds `needle` (None on timeout)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for process in marked(mark):
            if needle in process.command:
                return process
        time.sleep(0.05)
    return None


def kill_all(mark: str) -> int:
    """SIGKILL every process of the run (cleanup after a failed check); how many."""
    left = marked(mark)
    for process in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGKILL)
    return len(left)
