"""Where a registry's task files may be: inside the registry's own folder.

A tasks.yaml names its PDDL files relative to its folder. A path that climbs out of it
(`../../etc/passwd`, an absolute path, a symlink to elsewhere) is refused: a registry
found through COWP_PDDL_DIR or a share folder must not make `cowp` read whatever file
its author chose. Files outside are still usable when a person names them on the
command line, where they are plainly what was asked for. What is read is then bounded
by `cowp_ros.limits.read_regular_file` (regular files only, with a size cap).
"""

from __future__ import annotations

from pathlib import Path

from cowp_ros.errors import CowpError


def inside(directory: Path, relative: str, registry: Path, what: str) -> Path:
    """`directory / relative` when it stays inside `directory` (links resolved)."""
    candidate = directory / relative
    root = directory.resolve()
    if Path(relative).is_absolute() or not candidate.resolve().is_relative_to(root):
        raise CowpError(
            f"the task registry {registry} names {relative!r} as the {what}: outside "
            f"its folder {directory}",
            hint="keep a task's files in the registry's folder (paths relative to it), "
            "or give the file on the command line",
        )
    return candidate
