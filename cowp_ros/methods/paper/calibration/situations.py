"""The situations the Plan Monitor is calibrated and measured on, and their fixed split.

Two sources, one shape (`CalibrationItem`):

* blocking situations from the public COWP dataset (`situations.json`, read from the
  shared data folder, never copied into the package), each asked at the step the
  crowd named most often;
* benign situations written for this project (`data/benign_situations.yaml`): what a
  robot really observes that blocks nothing. Without them a monitor that flags
  everything looks perfect, because the dataset holds only blockers.

The dev/test split is by task, the project's one split (`split:` in pddl/tasks.yaml,
`cowp_ros.tasks.split_tasks`): the items of the test tasks are `test`, every other item
(the dev tasks' and those of tasks outside the benchmark, such as serve_water) is
`dev`. Thresholds are tuned on dev; test is for reporting only, and no test task has
ever been tuned on. (Until this split, items were dealt by a seeded hash within each
task, so every benchmark task had items on both sides.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks import TaskSpec, get_task, split_tasks

SPLIT_BY = "task (pddl/tasks.yaml split: test tasks -> test, every other task -> dev)"
"""How the split is made; the config records it beside a tuned threshold."""
SPLITS = ("dev", "test", "all")
BENIGN_FILE = "data/benign_situations.yaml"
BENIGN_KINDS = frozenset({"attribute", "unrelated", "elsewhere", "variation", "robot"})


@dataclass(frozen=True)
class CalibrationItem:
    """One situation raised at one step, with the verdict common sense expects."""

    key: str
    """Unique and stable: the split hash is taken over it."""
    task: str
    """Registered task name (`cowp_ros.tasks`)."""
    action: str
    """The step's action name in that task's domain."""
    situation: str
    blocking: bool
    """True: the step is not suitable in this situation (the monitor should flag it)."""
    kind: str
    """`dataset` for the COWP blockers, else the benign kind (attribute, unrelated, ...)."""
    normal: str = ""
    """The dataset's `situation_opposite` (empty for benign items); kept for reports."""

    @property
    def stratum(self) -> tuple[str, bool]:
        return (self.task, self.blocking)


def assign_splits(
    items: Iterable[CalibrationItem], test_tasks: Collection[str] | None = None
) -> dict[str, str]:
    """key -> "dev" or "test": test for the items of the test tasks, dev for the rest."""
    test = set(split_tasks()["test"] if test_tasks is None else test_tasks)
    splits: dict[str, str] = {}
    for item in items:
        if item.key in splits:
            raise CowpError(f"calibration items share the key {item.key!r}")
        splits[item.key] = "test" if item.task in test else "dev"
    return splits


def select_split(
    items: Sequence[CalibrationItem], split: str, test_tasks: Collection[str] | None = None
) -> list[CalibrationItem]:
    """The items of one split ("dev", "test" or "all"), in their original order."""
    if split not in SPLITS:
        raise CowpError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    if split == "all":
        return list(items)
    splits = assign_splits(items, test_tasks)
    return [item for item in items if splits[item.key] == split]


def _benign_text(path: Path | None) -> tuple[str, str]:
    if path is None:
        source = resources.files("cowp_ros.methods.paper.calibration").joinpath(BENIGN_FILE)
        return source.read_text(), f"the packaged {BENIGN_FILE}"
    try:
        return path.read_text(), str(path)
    except OSError as err:
        raise CowpError(f"cannot read benign situations {path}: {err.strerror}.") from err


def parse_benign(text: str, source: str = "<text>") -> list[CalibrationItem]:
    """Benign items from YAML: `task: [{step, kind, situation}, ...]`, checked against
    the task registry so a typo in a step name fails here, not as a silent mis-ask."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        raise CowpError(f"{source} is not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise CowpError(f"{source} must map task names to lists of situations")
    items: list[CalibrationItem] = []
    for task_name, entries in data.items():
        spec = get_task(str(task_name))
        actions = set(spec.phrases)
        for entry in entries or []:
            if not isinstance(entry, dict) or not {"step", "situation"} <= set(entry):
                raise CowpError(f"{source}: each {task_name} entry needs step and situation")
            action, text = str(entry["step"]), str(entry["situation"]).strip()
            kind = str(entry.get("kind", "variation"))
            if action not in actions:
                raise CowpError(
                    f"{source}: {task_name} has no action {action!r}",
                    hint=f"use one of {', '.join(sorted(actions))}",
                )
            if kind not in BENIGN_KINDS:
                raise CowpError(
                    f"{source}: unknown kind {kind!r}; use one of {', '.join(sorted(BENIGN_KINDS))}"
                )
            key = f"benign/{spec.name}/{action}/{text}"
            items.append(CalibrationItem(key, spec.name, action, text, False, kind))
    return items


def load_benign_situations(split: str = "all", path: Path | None = None) -> list[CalibrationItem]:
    """The benign set (packaged unless `path`), optionally one split of it.

    This is what `cowp bench` loads as distractors: each item names its task
    (`item.task`), the step it concerns (`item.action`) and the sentence
    (`item.situation`); all of them should leave the plan unchanged. A set whose dev and
    test sentences share a template is refused (`check_templates_disjoint`).
    """
    text, source = _benign_text(path)
    items = parse_benign(text, source)
    check_templates_disjoint(items, source)
    return select_split(items, split)


ROOMS = re.compile(
    r"\b(?:the |a |another )?(?:living room|dining room|bedroom|kitchen|hallway|garden|"
    r"bathroom|office|house|room)\b"
)
COLOURS = frozenset(
    [
        "black",
        "blue",
        "brown",
        "green",
        "grey",
        "gray",
        "orange",
        "pink",
        "purple",
        "red",
        "silver",
        "white",
        "yellow",
    ]
)
MATERIALS = frozenset(
    [
        "ceramic",
        "chrome",
        "metal",
        "oak",
        "paper",
        "plastic",
        "porcelain",
        "steel",
        "stainless",
        "wood",
        "wooden",
    ]
)
HOUSEHOLD_NOUNS = frozenset(
    [
        "battery",
        "book",
        "car",
        "cheese",
        "coat",
        "crumbs",
        "cups",
        "curtains",
        "dirt",
        "dishwasher",
        "dog",
        "door",
        "doorbell",
        "flower",
        "flowers",
        "fridge",
        "fruit",
        "lights",
        "light",
        "music",
        "newspaper",
        "person",
        "phone",
        "plant",
        "sauce",
        "shaker",
        "shirt",
        "shower",
        "tablecloth",
        "television",
        "vase",
        "window",
    ]
)
"""Nouns of the benign sentences that are no task's object kind (those come from the
domains): a sentence that swaps one of them for another keeps its template."""


@cache
def _object_kinds() -> frozenset[str]:
    kinds: set[str] = set()
    for name in split_tasks().get("dev", []) + split_tasks().get("test", []):
        task = get_task(name).load()
        kinds |= set(task.types) | set(task.objects.values())
    return frozenset(kinds)


def template(sentence: str) -> str:
    """The sentence with its swappable words as slots: objects and rooms (`<x>`,
    `<room>`), colours and materials; articles as one. "the cup is blue" and "the plate
    is white" are one template, "the <x> is <colour>": a sentence made from another by
    swapping a noun or an attribute says nothing new about the monitor."""
    text = ROOMS.sub(" <room> ", sentence.lower().strip().rstrip("."))
    slots: list[str] = []
    for word in re.findall(r"<room>|[a-z0-9']+", text):
        if slots[-2:] == ["made", "of"] or word in MATERIALS:
            word = "<material>"  # "made of glass": the glass is a material here
        elif word in _object_kinds() or word in HOUSEHOLD_NOUNS:
            word = "<x>"
        elif word in COLOURS:
            word = "<colour>"
        elif word in ("a", "an"):
            word = "the"
        if not (slots and word == slots[-1] and word.startswith("<")):
            slots.append(word)  # "stainless steel" is one material
    return " ".join(slots)


def check_templates_disjoint(items: Sequence[CalibrationItem], source: str = "<text>") -> None:
    """Refuse a benign set whose test sentences share a template with dev ones: the test
    figure would then measure sentences the monitor was tuned on, with a noun swapped."""
    dev = select_split(items, "dev")
    by_template: dict[str, CalibrationItem] = {}
    for item in dev:
        by_template.setdefault(template(item.situation), item)
    shared = [
        f"{item.task}: {item.situation!r} ~ {by_template[t].task}: "
        f"{by_template[t].situation!r} ({t})"
        for item in select_split(items, "test")
        if (t := template(item.situation)) in by_template
    ]
    if shared:
        raise CowpError(
            f"{source}: {len(shared)} test sentence(s) share a template with a dev one: "
            + "; ".join(shared),
            hint="write the test tasks' sentences anew (another structure, not a swapped "
            "noun, colour or material)",
        )


def parse_dataset(
    records: Sequence[dict], source: str = "situations.json"
) -> list[CalibrationItem]:
    """Blocking items from the dataset's records, asked at their most-named step."""
    items: list[CalibrationItem] = []
    for record in records:
        try:
            spec = get_task(int(record["task_id"]))
            actions = sorted(record["actions"], key=lambda a: -int(a["count"]))
            action = str(actions[0]["action"])
            key = f"dataset/{record['task_id']}/{record['situation_index']}"
            text = str(record["situation"]).strip()
            normal = str(record.get("situation_opposite", "")).strip()
        except (KeyError, IndexError, TypeError, ValueError) as err:
            raise CowpError(f"{source}: malformed record {record!r} ({err})") from err
        if action not in spec.phrases:
            raise CowpError(f"{source}: task {spec.name} has no action {action!r}")
        items.append(CalibrationItem(key, spec.name, action, text, True, "dataset", normal))
    return items


def _dataset_records(dataset_dir: Path) -> list[dict]:
    path = dataset_dir / "situations.json"
    try:
        records = json.loads(path.read_text())
    except OSError as err:
        raise CowpError(
            f"cannot read {path}: {err.strerror}",
            hint="pass --dataset-dir (or set COWP_DATASET_DIR) to the COWP dataset folder",
        ) from err
    except json.JSONDecodeError as err:
        raise CowpError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(records, list):
        raise CowpError(f"{path} must hold a list of situation records")
    return records


def load_items(
    dataset_dir: Path | None, split: str = "all", benign_path: Path | None = None
) -> list[CalibrationItem]:
    """Blocking (from the dataset, when `dataset_dir`) and benign items of one split.

    The split is dealt over blocking and benign items together, stratified, so the dev
    part of each is the same whether or not the other is loaded.
    """
    items = parse_benign(*_benign_text(benign_path))
    if dataset_dir is not None:
        source = str(dataset_dir / "situations.json")
        items = parse_dataset(_dataset_records(dataset_dir), source) + items
    return select_split(items, split)


@cache
def _loaded(task_name: str) -> tuple[TaskSpec, PlanningTask]:
    spec = get_task(task_name)
    return spec, spec.load()


def ground_step(task_name: str, action: str) -> tuple[PlanStep, PlanningTask]:
    """A plan step for `action` over the task's own objects (the closed-world plan's).

    Each parameter takes the first task object of a fitting type, else any problem
    object of that type, so "fill_cup" becomes `(fill_cup cup_1 faucet_1)` as the
    planner would have produced it.
    """
    spec, task = _loaded(task_name)
    args: list[str] = []
    for type_name in task.parameter_types(action):
        fitting = [o for o in spec.task_objects if task.is_subtype(task.objects[o], type_name)]
        fitting = fitting or sorted(task.objects_of_type(type_name))
        if not fitting:
            raise CowpError(f"task {task_name}: no object of type {type_name} for {action}")
        args.append(fitting[0])
    return PlanStep(action, tuple(args)), task
