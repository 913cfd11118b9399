"""The task registry: task names, aliases and dataset ids -> PDDL files and phrases.

The registry is data (`pddl/tasks.yaml`) so that adding a task is adding files. The
`pddl/` folder is found in the source tree when running from a checkout, else in the
installed share folder (`share/cowp_ros/pddl`, via ament_index when ROS is there), or
wherever `COWP_PDDL_DIR` points. Registries of one's own, anywhere, are added to it with
`--tasks FILE` or `COWP_TASKS` (`cowp_ros.tasks.sources`).
"""

from __future__ import annotations

import difflib
import os
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.limits import MAX_REGISTRY_FILE_BYTES, LimitError, read_regular_file
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.pddl.identifiers import check_identifier
from cowp_ros.resources import SOURCE_ROOT
from cowp_ros.tasks.paths import inside
from cowp_ros.tasks.phrases import check_template
from cowp_ros.tasks.sources import added_registry_files, merge_registries

REGISTRY_FILE = "tasks.yaml"
PACKAGE = "cowp_ros"


class UnknownTaskError(CowpError):
    """A task name, alias or dataset id that the registry does not hold."""


@dataclass(frozen=True)
class TaskSpec:
    """One task: where its PDDL lives, which objects it needs, how to say its actions."""

    name: str
    description: str
    domain_path: Path
    problem_path: Path
    task_objects: tuple[str, ...]
    phrases: Mapping[str, str]
    aliases: tuple[str, ...] = ()
    dataset_id: int | None = None
    split: str | None = None
    """`dev` or `test` for the dataset tasks (see `split_tasks`), None for the others."""
    release_actions: tuple[str, ...] = ()
    """Actions that let go of a held object (the benchmark allows them on an unusable one)."""
    house_path: Path | None = None
    """The benchmark's problem (dataset tasks): the house of 86 objects a trial samples."""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def load(self) -> PlanningTask:
        """The task's full problem: its own objects and the whole pool of stand-ins."""
        return PlanningTask.load(self.domain_path, self.problem_path)

    def load_house(self) -> PlanningTask:
        """The benchmark's house: the task with every object a trial may have present.

        Same domain, initial state and goal as `load()`, over more objects (second
        objects of the task's own kinds among them). A task without a house file has
        its problem as its house.
        """
        if self.house_path is None:
            return self.load()
        return PlanningTask.load(self.domain_path, self.house_path)

    def pool(self, task: PlanningTask | None = None) -> list[str]:
        """The problem's objects that the closed-world plan does not need, in name order."""
        task = task or self.load()
        return sorted(set(task.problem_object_names) - set(self.task_objects))

    def build_problem(
        self,
        n_objects: int | None = None,
        *,
        pool_fraction: float | None = None,
        seed: int | None = 0,
        task: PlanningTask | None = None,
    ) -> PlanningTask:
        """The task with its own objects plus some of the pool present.

        `n_objects`: total number of problem objects (the replanning benchmark uses 43);
        `pool_fraction`: the share of the pool to keep (the benchmark's "a random half
        of the others" is 0.5). Which pool objects stay is drawn with `seed`. With
        neither, the whole problem is returned.
        """
        task = task or self.load()
        pool = self.pool(task)
        if n_objects is None and pool_fraction is None:
            return task
        if n_objects is not None and pool_fraction is not None:
            raise CowpError("give n_objects or pool_fraction, not both")
        if pool_fraction is not None:
            if not 0.0 <= pool_fraction <= 1.0:
                raise CowpError(f"pool_fraction must be within 0..1, got {pool_fraction}")
            wanted = round(len(pool) * pool_fraction)
        else:
            assert n_objects is not None
            wanted = n_objects - len(self.task_objects)
            if wanted < 0 or wanted > len(pool):
                raise CowpError(
                    f"task {self.name!r} can have {len(self.task_objects)} to "
                    f"{len(self.task_objects) + len(pool)} objects, not {n_objects}"
                )
        chosen = random.Random(seed).sample(pool, wanted)
        return keep_objects(task, [*self.task_objects, *chosen])


def pddl_dir() -> Path:
    """Where the task registry and PDDL files are (see the module docstring)."""
    override = os.environ.get("COWP_PDDL_DIR")
    candidates: list[Path] = [Path(override)] if override else []
    candidates.append(SOURCE_ROOT / "pddl")
    try:
        from ament_index_python.packages import get_package_share_directory

        candidates.append(Path(get_package_share_directory(PACKAGE)) / "pddl")
    except Exception:  # ament_index missing, or the package is not installed in it
        pass
    candidates.append(Path(sys.prefix) / "share" / PACKAGE / "pddl")
    for candidate in candidates:
        if (candidate / REGISTRY_FILE).is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise CowpError(
        "cannot find the cowp_ros task files (pddl/tasks.yaml)",
        hint=f"looked in: {tried}; set COWP_PDDL_DIR to the folder holding tasks.yaml",
    )


class RegistryError(CowpError):
    """A task registry (tasks.yaml) that cannot be read or does not hold tasks."""


_REQUIRED = ("description", "domain", "problem", "task_objects")


def _registry_error(path: Path, what: str) -> RegistryError:
    return RegistryError(
        f"the task registry {path} {what}",
        hint="fix the file, or point COWP_PDDL_DIR at a folder with a valid tasks.yaml",
    )


def _strings(value: Any, path: Path, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        raise _registry_error(path, f"says {where} is {value!r}, not a list of names")
    return tuple(str(v) for v in value)


def _spec(directory: Path, path: Path, name: Any, entry: Any) -> TaskSpec:
    """One registry entry, checked field by field (a wrong one names itself)."""
    if not isinstance(name, str):
        raise _registry_error(path, f"has a task named {name!r}, which is not text")
    try:
        check_identifier(name, "task name")
    except CowpError as err:
        raise _registry_error(path, f"has a bad task name: {err.message}") from None
    if not isinstance(entry, dict):
        raise _registry_error(path, f"has task {name!r} as {type(entry).__name__}, not a mapping")
    missing = [key for key in _REQUIRED if key not in entry]
    if missing:
        raise _registry_error(path, f"lacks {', '.join(missing)} for task {name!r}")
    for key in ("description", "domain", "problem"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise _registry_error(path, f"says {key} of task {name!r} is {entry[key]!r}")
    phrases = entry.get("phrases") or {}
    if not isinstance(phrases, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in phrases.items()
    ):
        raise _registry_error(path, f"has phrases of task {name!r} that are not text by action")
    for action, template in phrases.items():
        try:
            check_template(action, template)
        except CowpError as err:
            bad = f"has a bad phrase in task {name!r}: {err.message}"
            raise _registry_error(path, bad) from None
    dataset_id = entry.get("dataset_id")
    if dataset_id is not None and (isinstance(dataset_id, bool) or not isinstance(dataset_id, int)):
        raise _registry_error(path, f"says dataset_id of task {name!r} is {dataset_id!r}")
    house = entry.get("house")
    if house is not None and (not isinstance(house, str) or not house.strip()):
        raise _registry_error(path, f"says house of task {name!r} is {house!r}")
    return TaskSpec(
        name=name,
        description=entry["description"],
        domain_path=inside(directory, entry["domain"], path, f"domain of task {name!r}"),
        problem_path=inside(directory, entry["problem"], path, f"problem of task {name!r}"),
        task_objects=_strings(entry["task_objects"], path, f"task_objects of {name!r}"),
        phrases=dict(phrases),
        aliases=_strings(entry.get("aliases"), path, f"aliases of {name!r}"),
        dataset_id=dataset_id,
        split=_split_of(name, entry.get("split")),
        release_actions=_strings(
            entry.get("release_actions"), path, f"release_actions of {name!r}"
        ),
        house_path=inside(directory, house, path, f"house of task {name!r}") if house else None,
        extra={k: v for k, v in entry.items() if k not in TaskSpec.__dataclass_fields__},
    )


def _registry(directory: Path) -> dict[str, TaskSpec]:
    return _registry_file(directory / REGISTRY_FILE)


@cache
def _registry_file(path: Path) -> dict[str, TaskSpec]:
    import yaml  # here: `cowp plan --domain D --problem P` reads no registry, 13 ms saved

    directory = path.parent
    try:
        text = read_regular_file(path, MAX_REGISTRY_FILE_BYTES, "task registry").decode("utf-8")
    except LimitError as err:
        raise _registry_error(path, f"cannot be read: {err.message}") from None
    except UnicodeDecodeError as err:
        raise _registry_error(path, f"is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise _registry_error(path, f"cannot be read: {err.strerror}") from None
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        detail = " ".join(str(err).split())[:300]
        raise _registry_error(path, f"is not valid YAML: {detail}") from None
    except RecursionError:
        raise _registry_error(path, "is nested too deeply") from None
    if not isinstance(raw, dict):
        raise _registry_error(path, f"holds a {type(raw).__name__}, not tasks by name")
    return {str(name): _spec(directory, path, name, entry) for name, entry in raw.items()}


SPLITS = ("dev", "test")


def _split_of(task: str, value: Any) -> str | None:
    if value is None:
        return None
    if value not in SPLITS:
        raise CowpError(f"task {task}: split must be one of {', '.join(SPLITS)}, not {value!r}")
    return str(value)


def split_tasks(directory: Path | None = None) -> dict[str, list[str]]:
    """The fixed dev/test split of the dataset tasks: {"dev": [...], "test": [...]}.

    Written once in the registry (`split:` per task, with the reason in its header), so
    the monitor calibration, the acquirer's threshold and the benchmark tables all read
    the same split: a threshold is chosen on dev tasks, a figure on test tasks is only
    ever reported.
    """
    found: dict[str, list[str]] = {name: [] for name in SPLITS}
    for spec in all_tasks(directory).values():
        if spec.split is not None:
            found[spec.split].append(spec.name)
    return found


def all_tasks(directory: Path | None = None) -> dict[str, TaskSpec]:
    """Every registered task by name, in registry order: the shipped ones, then those of
    the registries `COWP_TASKS` adds (only `directory`'s when one is given)."""
    if directory is not None:
        return dict(_registry(directory))
    shipped = _registry(pddl_dir())
    return merge_registries(
        pddl_dir() / REGISTRY_FILE,
        shipped,
        [(p, _registry_file(p)) for p in added_registry_files()],
    )


def task_names(directory: Path | None = None) -> list[str]:
    """The task names, in registry order."""
    return list(all_tasks(directory))


def describe_tasks(directory: Path | None = None) -> str:
    """ "tasks: a, b, c" for help texts; never raises, so that a broken registry breaks
    `cowp --version` and every other subcommand's help no more than it must."""
    try:
        return f"tasks: {', '.join(task_names(directory))}"
    except CowpError as err:
        return f"tasks: (the task registry cannot be read: {err.message})"


def get_task(key: str | int, directory: Path | None = None) -> TaskSpec:
    """A task by name, alias or dataset id (`fill_cup`, `task4`, `4` and 4 all work)."""
    tasks = all_tasks(directory)
    text = str(key).strip().lower().replace("-", "_").replace(" ", "_")
    for spec in tasks.values():
        if text == spec.name or text in spec.aliases:
            return spec
        if spec.dataset_id is not None and text == str(spec.dataset_id):
            return spec
    listing = "; ".join(
        f"{s.name}" + (f" (dataset task {s.dataset_id})" if s.dataset_id else "")
        for s in tasks.values()
    )
    names = [n for spec in tasks.values() for n in (spec.name, *spec.aliases)]
    close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
    guess = ""
    if close:
        meant = next(s.name for s in tasks.values() if close[0] in (s.name, *s.aliases))
        guess = f"; did you mean '{meant}'?"
    raise UnknownTaskError(f"unknown task {key!r}{guess}", hint=f"known tasks: {listing}")


def tasks_for_dataset(ids: Sequence[int], directory: Path | None = None) -> list[TaskSpec]:
    """The registered tasks for dataset ids, in the order given."""
    return [get_task(i, directory) for i in ids]
