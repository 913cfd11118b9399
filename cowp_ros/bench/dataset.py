"""The public COWP situation dataset (`situations.json`), read where the user keeps it.

Each record is one distinguishable situation of one task, with the crowd's count and the
plan-step actions at which people said it happens. The benchmark draws, at a plan step,
among the situations that name that step's action, each weighted by how many people put
it there (`actions[].count`), as the paper's protocol does.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cowp_ros.errors import CowpError

SITUATIONS_FILE = "situations.json"


@dataclass(frozen=True)
class DatasetSituation:
    """One situation of one task; `at_actions` maps a step action to its crowd count."""

    task_id: int
    index: int
    text: str
    opposite: str
    object: str
    count: int
    at_actions: tuple[tuple[str, int], ...]

    @property
    def key(self) -> str:
        """A stable id: `4/2` is situation 2 of task 4."""
        return f"{self.task_id}/{self.index}"

    def weight_at(self, action: str) -> int:
        return sum(count for name, count in self.at_actions if name == action)


@dataclass(frozen=True)
class SituationDataset:
    """All situations, by task id."""

    path: Path
    situations: tuple[DatasetSituation, ...]

    @classmethod
    def load(cls, path: str | Path) -> SituationDataset:
        """From the dataset folder (holding situations.json) or the file itself."""
        path = Path(path).expanduser()
        file = path / SITUATIONS_FILE if path.is_dir() else path
        if not file.is_file():
            raise CowpError(
                f"no situation dataset at {file}",
                hint="pass --dataset with the folder holding situations.json (the public "
                "COWP release, github.com/yding25/GPT-Planner; in this workspace "
                "../shared/data/cowp)",
            )
        try:
            raw = json.loads(file.read_text())
            situations = tuple(
                DatasetSituation(
                    task_id=int(r["task_id"]),
                    index=int(r["situation_index"]),
                    text=str(r["situation"]).strip(),
                    opposite=str(r.get("situation_opposite", "")).strip(),
                    object=str(r["object"]).strip(),
                    count=int(r["count"]),
                    at_actions=tuple((str(a["action"]), int(a["count"])) for a in r["actions"]),
                )
                for r in raw
            )
        except (ValueError, KeyError, TypeError) as err:
            raise CowpError(f"cannot read the situation dataset {file}: {err!r}") from err
        return cls(file, situations)

    def task_ids(self) -> list[int]:
        return sorted({s.task_id for s in self.situations})

    def for_task(self, task_id: int) -> list[DatasetSituation]:
        return [s for s in self.situations if s.task_id == task_id]

    def at_step(self, task_id: int, action: str) -> list[DatasetSituation]:
        """Situations people placed at `action` in task `task_id`."""
        return [s for s in self.for_task(task_id) if s.weight_at(action) > 0]


def draw_situation(
    candidates: Sequence[DatasetSituation], action: str, rng: random.Random
) -> DatasetSituation | None:
    """One situation for a step, weighted by the crowd count at that step's action."""
    weights = [s.weight_at(action) for s in candidates]
    if not candidates or sum(weights) <= 0:
        return None
    return rng.choices(list(candidates), weights=weights, k=1)[0]
