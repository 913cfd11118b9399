"""The shared model server's runtime files: its record, its locks, and its idle rule.

Both sides read them: the commands that look a server up, start or stop it
(`shared_server`), and the server process itself, which stops once nobody has used it
for its keep-alive (`IdleStop`, run by `local_server`). See `shared_server` for what
each file holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class ServerRecord:
    """A running shared server, as its state file says."""

    pid: int
    url: str
    model: str
    identity: str
    model_path: str
    keep_alive_s: float
    started_at: float
    """Seconds since the epoch, when it was ready."""

    @property
    def base_url(self) -> str:
        return self.url + "/v1"


@dataclass(frozen=True)
class ServerFiles:
    """The runtime files of the server of one model file (see the module docstring)."""

    state: Path
    lock: Path
    users: Path
    log: Path

    @classmethod
    def at(cls, stem: Path) -> ServerFiles:
        return cls(
            stem.with_suffix(".json"),
            stem.with_suffix(".lock"),
            stem.with_suffix(".users"),
            stem.with_suffix(".log"),
        )

    @classmethod
    def for_identity(cls, identity: str, directory: Path) -> ServerFiles:
        key = hashlib.sha256(identity.encode()).hexdigest()[:16]
        return cls.at(directory / f"server-{key}")

    @property
    def stem(self) -> Path:
        return self.state.with_suffix("")


@contextlib.contextmanager
def locked(path: Path, operation: int = fcntl.LOCK_EX) -> Iterator[bool]:
    """Hold an flock on `path` (created if missing); yields False when LOCK_NB found it taken."""
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, operation)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def unused(files: ServerFiles) -> bool:
    """Whether no command holds the server now (nobody has `users` locked)."""
    with locked(files.users, fcntl.LOCK_EX | fcntl.LOCK_NB) as alone:
        return alone


def read_record(files: ServerFiles) -> ServerRecord | None:
    """The state file's record, None when there is none or it cannot be read."""
    try:
        return ServerRecord(**json.loads(files.state.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def write_record(files: ServerFiles, record: ServerRecord) -> None:
    temporary = files.state.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(asdict(record), indent=1))
    os.replace(temporary, files.state)


class IdleStop:
    """In the server process: says when to stop, once nobody has used it for its keep-alive.

    Called every half second by `serve_forever`; it stops only while holding the lookup
    lock with no user, after removing its record, so no command can pick it in between.
    """

    def __init__(self, files: ServerFiles, keep_alive: float) -> None:
        self.files = files
        self.keep_alive = keep_alive
        self._idle_since: float | None = None

    def __call__(self) -> bool:
        now = time.monotonic()
        if not unused(self.files):
            self._idle_since = None
            return False
        if self._idle_since is None:
            self._idle_since = now
        if now - self._idle_since < self.keep_alive:
            return False
        with locked(self.files.lock):
            if not unused(self.files):
                self._idle_since = None
                return False
            record = read_record(self.files)
            if record is not None and record.pid == os.getpid():
                with contextlib.suppress(FileNotFoundError):
                    self.files.state.unlink()
        return True
