"""The one place a run's JSON report reaches the disk: unique, whole, and where it was meant.

`cowp run`, the task manager and the loop's own report all write through here:

- a report named by the writer gets a unique name: the time to the millisecond, plus
  the goal id (or the process id), so quick goals never share a file;
- it is written to a temporary file in the same folder, flushed to disk, then renamed
  into place: a full disk or a crash leaves the old file or none, never truncated JSON;
- a symlink is never followed: the temporary file is created exclusively (O_EXCL with
  O_NOFOLLOW), and the rename replaces a link planted at the final name instead of
  writing through it to wherever it points;
- a failure is a CowpError that names the path and the reason; the caller says so
  (and `cowp run` exits non-zero).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from pathlib import Path

from cowp_ros.errors import CowpError

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
REPORTS_DIR_ENV = "COWP_REPORTS_DIR"
DEFAULT_REPORTS_DIR = Path("build") / "reports"


def reports_folder(configured: str | Path | None = None) -> Path:
    """Where reports go: the folder a caller was given, else `$COWP_REPORTS_DIR`, else
    build/reports. One rule for `cowp run` and the task manager, so a user who sets the
    variable finds every report of a session in one place."""
    return Path(configured or os.environ.get(REPORTS_DIR_ENV) or DEFAULT_REPORTS_DIR)


def report_name(stem: str, unique: str = "", now: float | None = None) -> str:
    """`STEM-YYYYmmdd-HHMMSS.mmm-UNIQUE.json`: sortable by time, unique per goal."""
    now = time.time() if now is None else now
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    safe_stem = _UNSAFE.sub("_", stem)[:40] or "run"
    tag = _UNSAFE.sub("_", unique)[:36] or str(os.getpid())
    return f"{safe_stem}-{stamp}-{tag}.json"


def write_report(text: str, path: Path) -> Path:
    """Write `text` to `path` atomically, never through a symlink; return the path."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                raise CowpError(
                    f"cannot write the report to {path}: it exists and is not a file",
                    hint="name a file, or remove what is there",
                )
        temporary = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(temporary, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, path)  # replaces a link itself, never its target
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as err:
        raise CowpError(
            f"cannot write the report to {path}: {err.strerror or err}",
            hint="give a writable folder with room for the report",
        ) from err
    return path


def write_new_report(text: str, folder: Path, stem: str, unique: str = "") -> Path:
    """Write `text` as a new report in `folder` (`report_name`); never replaces one."""
    path = folder / report_name(stem, unique)
    for attempt in range(100):
        if not os.path.lexists(path):
            break
        path = folder / report_name(stem, f"{unique}-{attempt + 2}")
    return write_report(text, path)
