"""The one place a run's JSON report reaches the disk: unique, whole, and where it was meant.

`cowp run`, the task manager and the loop's own report all write through here:

- a report named by the writer gets a unique name: the time to the millisecond, plus
  the goal id (or the process id), so quick goals never share a file;
- it is written to a temporary file in the same folder, flushed to disk, then renamed
  into place: a full disk or a crash leaves the old file or none, never truncated JSON;
- a symlink is never followed: not as the folder (opened with O_NOFOLLOW, the file
  made and renamed relative to it), and not as the file: the temporary file is created
  exclusively (O_EXCL with O_NOFOLLOW), and the rename replaces a link planted at the
  final name instead of writing through it to wherever it points;
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
    variable finds every report of a session in one place. Absolute: the path is printed
    and handed to other processes, which run in other folders."""
    folder = Path(configured or os.environ.get(REPORTS_DIR_ENV) or DEFAULT_REPORTS_DIR)
    return Path(os.path.abspath(folder.expanduser()))  # no symlink followed


def report_name(stem: str, unique: str = "", now: float | None = None) -> str:
    """`STEM-YYYYmmdd-HHMMSS.mmm-UNIQUE.json`: sortable by time, unique per goal."""
    now = time.time() if now is None else now
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    safe_stem = _UNSAFE.sub("_", stem)[:40] or "run"
    tag = _UNSAFE.sub("_", unique)[:36] or str(os.getpid())
    return f"{safe_stem}-{stamp}-{tag}.json"


def write_report(text: str, path: Path) -> Path:
    """Write `text` to `path` atomically, never through a symlink; return the path.

    The folder is opened once, refusing a symlink (`O_NOFOLLOW`), and the file is
    created and renamed relative to that open folder: a folder swapped for a link
    meanwhile cannot send the report elsewhere.
    """
    folder = path.parent
    try:
        descriptor = _open_folder(folder, path)
        try:
            _write_in(descriptor, path, text)
        finally:
            os.close(descriptor)
    except OSError as err:
        raise CowpError(
            f"cannot write the report to {path}: {err.strerror or err}",
            hint="give a writable folder with room for the report",
        ) from err
    return path


def _open_folder(folder: Path, path: Path) -> int:
    """A descriptor of `folder` (made if missing); a CowpError that says what is there
    when it is a symlink (dangling or not) or not a folder."""
    if os.path.islink(folder):
        raise CowpError(
            f"cannot write the report to {path}: its folder {folder} is a symbolic link "
            f"(to {os.readlink(folder)}), which reports never follow",
            hint="name the real folder (or set COWP_REPORTS_DIR to it)",
        )
    with contextlib.suppress(FileExistsError):  # what is there is checked just below
        folder.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        mode = 0
    if not stat.S_ISDIR(mode):
        what = "it does not exist" if not mode else f"it is {_kind(mode)}, not a folder"
        raise CowpError(
            f"cannot write the report to {path}: {folder}: {what}",
            hint="name a folder the reports may go to (or set COWP_REPORTS_DIR to one)",
        )
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    return os.open(folder, flags | getattr(os, "O_CLOEXEC", 0))


def _write_in(folder_fd: int, path: Path, text: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path.name, dir_fd=folder_fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise CowpError(
                f"cannot write the report to {path}: it exists and is not a file",
                hint="name a file, or remove what is there",
            )
    temporary = f".{path.name}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags | getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=folder_fd)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        # replaces a link itself, never its target
        os.replace(temporary, path.name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder_fd)
        raise


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a folder"


def write_new_report(text: str, folder: Path, stem: str, unique: str = "") -> Path:
    """Write `text` as a new report in `folder` (`report_name`); never replaces one."""
    path = folder / report_name(stem, unique)
    for attempt in range(100):
        if not os.path.lexists(path):
            break
        path = folder / report_name(stem, f"{unique}-{attempt + 2}")
    return write_report(text, path)
