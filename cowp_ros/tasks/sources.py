"""Tasks from outside the checkout: added registries, and a domain and problem alone.

A user's own task lives wherever the user keeps it. Two ways in, neither editing the
checkout:

- an *added registry*: a `tasks.yaml` of the shipped format (paths relative to it),
  named by `--tasks FILE` or by `COWP_TASKS` (files or folders holding a tasks.yaml,
  separated by `os.pathsep`). Its tasks join the shipped ones; a name both hold is
  refused, naming both files. `--tasks` writes the variable, so the nodes a command
  starts (`cowp demo`, `cowp bringup`) know the same tasks;
- a quick try: `cowp run --domain D --problem P`, a task with no registry entry
  (`tasks/adhoc.py`).

(`COWP_PDDL_DIR` still *replaces* the shipped folder: it is how an installed package
finds its own files.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from cowp_ros.errors import CowpError
from cowp_ros.resources import TASKS_ENV

REGISTRY_FILE = "tasks.yaml"


def _as_registry_file(entry: str, where: str) -> Path:
    path = Path(entry).expanduser()
    if path.is_dir():
        path = path / REGISTRY_FILE
    if not path.is_file():
        raise CowpError(
            f"{where} names {entry}, which is neither a task registry file nor a folder "
            f"holding {REGISTRY_FILE}",
            hint="write a tasks.yaml like pddl/tasks.yaml (paths relative to it), or fix the path",
        )
    return path.resolve()


def added_registry_files() -> list[Path]:
    """The registries `COWP_TASKS` adds to the shipped one, in order, each checked."""
    raw = os.environ.get(TASKS_ENV, "")
    found: list[Path] = []
    for entry in raw.split(os.pathsep):
        if entry.strip():
            path = _as_registry_file(entry.strip(), f"${TASKS_ENV}")
            if path not in found:
                found.append(path)
    return found


def add_task_files(files: Iterable[str]) -> list[Path]:
    """`--tasks FILE...`: check each and add it to `COWP_TASKS` (children inherit it)."""
    added = [_as_registry_file(str(f), "--tasks") for f in files]
    if added:
        known = [str(p) for p in added_registry_files()]
        merged = known + [str(p) for p in added if str(p) not in known]
        os.environ[TASKS_ENV] = os.pathsep.join(merged)
    return added


def merge_registries(shipped_path: Path, shipped: dict, added: list[tuple[Path, dict]]) -> dict:
    """The shipped tasks, then each added registry's; a name held twice is refused."""
    merged = dict(shipped)
    origin = dict.fromkeys(shipped, shipped_path)
    for path, tasks in added:
        for name, spec in tasks.items():
            if name in merged:
                raise CowpError(
                    f"task {name!r} of {path} is already defined in {origin[name]}",
                    hint="give your task another name",
                )
            merged[name] = spec
            origin[name] = path
    return merged
