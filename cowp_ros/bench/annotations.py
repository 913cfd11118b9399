"""The judge of "acceptable to humans", read from one reviewable YAML file per task.

See `benchmarks/annotations/README.md` for the format. The judge answers two questions
the simulator needs and nothing else: what a dataset situation does to the world, and
whether an object of one kind is acceptable in another kind's role. It counts every
judgement it makes, by rule, so a report can say how much each annotation decided.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.bench.dataset import DatasetSituation
from cowp_ros.errors import CowpError
from cowp_ros.tasks import TaskSpec

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "annotations"


class Effect(enum.Enum):
    """What a situation does to the simulated world once it occurs."""

    DISABLES_OBJECT = "disables_object"  # the object is unusable from then on
    BEYOND_SKILLS = "beyond_skills"  # the step's action fails for every object from then on
    NO_EFFECT = "no_effect"  # nothing the robot does is blocked


@dataclass(frozen=True)
class SituationEffect:
    effect: Effect
    target: str | None  # the disabled task object (DISABLES_OBJECT only)
    why: str
    rule: str  # which annotation rule decided it, for the judgement counts


@dataclass
class TaskAnnotation:
    """One task's judge file, with counters of the judgements it made."""

    task: str
    dataset_id: int
    path: Path
    acceptable: dict[str, frozenset[str]]
    objects: dict[str, str]
    situations: dict[int, dict[str, str]]
    counts: Counter[str] = field(default_factory=Counter)

    def effect_of(self, situation: DatasetSituation, spec: TaskSpec) -> SituationEffect:
        """What `situation` does; raises CowpError when the file leaves it undecided."""
        override = self.situations.get(situation.index)
        if override is not None:
            effect = Effect(override["effect"])
            rule = f"situations.{situation.index}"
            return SituationEffect(effect, None, override.get("why", ""), rule)
        word = situation.object.lower()
        if word in self.objects:
            return SituationEffect(
                Effect.DISABLES_OBJECT, self.objects[word], "", f"objects.{word}"
            )
        by_type = {name.rsplit("_", 1)[0]: name for name in spec.task_objects}
        if word.replace(" ", "_") in by_type:
            target = by_type[word.replace(" ", "_")]
            return SituationEffect(Effect.DISABLES_OBJECT, target, "", "default object")
        raise CowpError(
            f"{self.path}: situation {situation.index} ({situation.text!r}, object "
            f"{situation.object!r}) has no effect written down",
            hint="add it under `objects` (which task object it disables) or `situations` "
            "(beyond_skills or no_effect, with why)",
        )

    def acceptable_in_role(self, role_type: str, used_type: str) -> bool:
        """Would a person accept a `used_type` doing `role_type`'s job in this task?"""
        accepted = used_type in self.acceptable.get(role_type, frozenset())
        self.counts[f"acceptable.{role_type}.{used_type}={'yes' if accepted else 'no'}"] += 1
        return accepted

    def count(self, rule: str) -> None:
        self.counts[rule] += 1

    def check_covers(self, situations: Iterable[DatasetSituation], spec: TaskSpec) -> None:
        """Fail at load time, not mid-run, if any situation of the task is undecided."""
        for situation in situations:
            effect = self.effect_of(situation, spec)
            if effect.target is not None and effect.target not in spec.task_objects:
                raise CowpError(
                    f"{self.path}: situation {situation.index} disables {effect.target}, "
                    f"which is not one of the task's objects {list(spec.task_objects)}"
                )


def load_annotation(path: Path) -> TaskAnnotation:
    try:
        raw: Mapping[str, Any] = yaml.safe_load(path.read_text()) or {}
        situations = {
            int(k): {str(a): str(b) for a, b in dict(v).items()}
            for k, v in (raw.get("situations") or {}).items()
        }
        for index, entry in situations.items():
            Effect(entry.get("effect", ""))
            if entry["effect"] == Effect.DISABLES_OBJECT.value:
                raise ValueError(f"situation {index}: use `objects` to name what it disables")
        return TaskAnnotation(
            task=str(raw["task"]),
            dataset_id=int(raw["dataset_id"]),
            path=path,
            acceptable={
                str(role): frozenset(str(k) for k in kinds or ())
                for role, kinds in (raw.get("acceptable") or {}).items()
            },
            objects={str(k).lower(): str(v) for k, v in (raw.get("objects") or {}).items()},
            situations=situations,
        )
    except (OSError, yaml.YAMLError, KeyError, ValueError, TypeError) as err:
        raise CowpError(
            f"cannot read the benchmark annotation {path}: {err!r}",
            hint="see benchmarks/annotations/README.md for the format",
        ) from err


def load_annotations(directory: Path = DEFAULT_DIR) -> dict[str, TaskAnnotation]:
    """Every `<task>.yaml` in `directory`, by task name."""
    if not directory.is_dir():
        raise CowpError(
            f"no benchmark annotations at {directory}",
            hint="pass --annotations with the folder of <task>.yaml judge files",
        )
    found = {}
    for path in sorted(directory.glob("*.yaml")):
        annotation = load_annotation(path)
        found[annotation.task] = annotation
    return found
