"""A run's report: the record of one open-world run, its one schema, and its file.

- The record (`CowpReport`): every plan, question, answer and PDDL change of a run, in
  order. Each event carries a one-line `text` a person reads (the CLI prints these, the
  ROS task manager sends them as action feedback) and the structured `data` behind it.
  The whole report is plain JSON, so a run can be inspected, diffed, or scored
  afterwards.
- The schema (`report_document`, `read_report`): `cowp run` and the task manager both
  write a run's report as the loop's own record (`CowpReport.to_dict()`: task,
  description, planner, model, outcome, explanation, usage, events) with how the run
  ended on top; what only one of them knows goes into a section of its own (the task
  manager's `graph`: the goal as sent, the steps the robot executed, situations
  dropped, time per phase, requests per service). So a script that reads reports reads
  them all with `read_report`.
- The file (`write_report`, `write_new_report`): the one place a report reaches the
  disk, unique, whole, and where it was meant:
  - a report named by the writer gets a unique name: the time to the millisecond, plus
    the goal id (or the process id), so quick goals never share a file;
  - it is written to a temporary file in the same folder, flushed to disk, then renamed
    into place: a full disk or a crash leaves the old file or none, never truncated
    JSON;
  - a symlink is never followed: not as the folder (opened with O_NOFOLLOW, the file
    made and renamed relative to it), and not as the file: the temporary file is
    created exclusively (O_EXCL with O_NOFOLLOW), and the rename replaces a link
    planted at the final name instead of writing through it to wherever it points;
  - a failure is a CowpError that names the path and the reason; the caller says so
    (and `cowp run` exits non-zero).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.cowp.events import EventKind
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage


@dataclass(frozen=True)
class Event:
    """One thing that happened; `data` is JSON-serialisable."""

    kind: EventKind
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    at_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "text": self.text,
            "at_s": round(self.at_s, 3),
            **self.data,
        }


@dataclass
class CowpReport:
    """Everything one run did, in order, plus its outcome and one-line explanation."""

    task: str
    description: str
    planner: str
    model: str
    events: list[Event] = field(default_factory=list)
    outcome: str = "not_planned"
    explanation: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic, repr=False)
    listeners: list[Callable[[Event], None]] = field(default_factory=list, repr=False)

    def add(self, kind: EventKind, text: str, **data: Any) -> Event:
        """Append an event and pass it to every listener (the CLI's narrative, the ROS
        task manager's action feedback) as it happens."""
        event = Event(EventKind(kind), text, data, time.monotonic() - self.started)
        self.events.append(event)
        for listener in self.listeners:
            listener(event)
        return event

    def of_kind(self, kind: EventKind | str) -> list[Event]:
        """The events of one kind, in order."""
        wanted = EventKind(kind)
        return [e for e in self.events if e.kind is wanted]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "description": self.description,
            "planner": self.planner,
            "model": self.model,
            "outcome": self.outcome,
            "explanation": self.explanation,
            "usage": self.usage,
            "events": [e.to_dict() for e in self.events],
        }

    def to_json(self) -> str:
        """Strict JSON: a NaN or infinity anywhere becomes null, never a bare `NaN`."""
        return strict_json(self.to_dict())

    def write(self, path: Path | str) -> Path:
        """Write the report as JSON (`write_report`: atomic, no symlink followed); a
        clear error when the path cannot be written."""
        return write_report(self.to_json() + "\n", Path(path))


def strict_json(data: Any) -> str:
    """`data` as indented strict JSON: NaN and infinities become null."""
    return json.dumps(_finite(data), indent=2, sort_keys=False, allow_nan=False)


def _finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (for strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


# ---- the schema: one for every run, and one reader ------------------------------------

REPORT_KEYS = ("task", "description", "planner", "model", "outcome", "explanation", "usage")
"""Every report has these (and `events`, a list of objects with a `kind` and a `text`)."""


def usage_summary(usage: Usage) -> dict[str, Any]:
    """A model's usage as reports hold it."""
    return {
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cache_hits": usage.cache_hits,
        "seconds": round(usage.seconds, 3),
    }


def report_document(
    report: CowpReport | None,
    *,
    task: str,
    planner: str = "",
    outcome: str | None = None,
    explanation: str | None = None,
    error: dict[str, str] | None = None,
    **sections: Any,
) -> dict[str, Any]:
    """The report of a run: the loop's record (or an empty one when the run ended before
    a loop existed), how the run ended, the error if one ended it, and `sections`."""
    if report is None:
        data: dict[str, Any] = {
            "task": task,
            "description": "",
            "planner": planner,
            "model": "",
            "outcome": "not_planned",
            "explanation": "",
            "usage": {},
            "events": [],
        }
    else:
        data = report.to_dict()
    if outcome is not None:
        data["outcome"] = outcome
    if explanation is not None:
        data["explanation"] = explanation
    if error is not None:
        data["error"] = error
    data.update(sections)
    return data


@dataclass(frozen=True)
class RunReport:
    """A report as read back: the common fields, and every other section by name."""

    task: str
    description: str
    planner: str
    model: str
    outcome: str
    explanation: str
    usage: dict[str, Any]
    events: list[dict[str, Any]]
    sections: dict[str, Any] = field(default_factory=dict)

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("kind") == kind]


def read_report(path: Path | str) -> RunReport:
    """Read any run's report; a file that is not one is a clear error."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CowpError(f"cannot read the report {path}: {err.strerror}") from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CowpError(f"{path} is not a JSON report: {err}") from err
    if not isinstance(data, dict):
        raise CowpError(f"{path} is not a run report: it holds no JSON object")
    missing = [key for key in (*REPORT_KEYS, "events") if key not in data]
    if missing:
        raise CowpError(f"{path} is not a run report: it lacks {', '.join(missing)}")
    events = data["events"]
    if not isinstance(events, list) or not all(
        isinstance(e, dict) and isinstance(e.get("kind"), str) and isinstance(e.get("text"), str)
        for e in events
    ):
        raise CowpError(f"{path} is not a run report: its events are not kind/text records")
    if not isinstance(data["usage"], dict):
        raise CowpError(f"{path} is not a run report: its usage is not an object")
    common = {key: data[key] for key in REPORT_KEYS}
    for key in REPORT_KEYS:
        if key != "usage" and not isinstance(common[key], str):
            raise CowpError(f"{path} is not a run report: {key} is not text")
    sections = {k: v for k, v in data.items() if k not in (*REPORT_KEYS, "events")}
    return RunReport(**common, events=events, sections=sections)


# ---- the file: unique, whole, never through a symlink ----------------------------------

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
