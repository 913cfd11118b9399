"""Tuned monitor thresholds, per model, in `config/monitor_calibration.yaml`.

A threshold only means something for the model and prompt variant it was chosen for
(a 1.5B model's "0.3" is not a 70B model's), so entries are keyed by the model name the
server reports and name their variant. `cowp monitor eval --tune` writes them from the
dev split; `PlanMonitor` reads the entry of the model it talks to and falls back to the
uncalibrated yes/no answer for a model without one (there is nothing to calibrate by).

    models:
      <model name>:
        variant: plain-contrast       # cowp_ros.methods.paper.calibration.scoring.VARIANTS
        threshold: 0.83               # blocked when the score >= threshold
        examples: [...]               # cross-task variants only: the few-shot pool
        tuned_on: {...}               # dev figures, for the reader
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.calibration.scoring import TaskExample, Variant, get_variant
from cowp_ros.resources import share_path

CONFIG_ENV = "COWP_MONITOR_CALIBRATION"
HEADER = """\
# Plan Monitor calibration, written by `cowp monitor eval --tune`.
# Per model (the name the LLM server reports): the scoring variant and the threshold
# chosen on the dev split (blocked when score >= threshold; scores are log-odds of
# "blocked"). A model without an entry keeps the plain yes/no answer. Read by
# PlanMonitor, hence by `cowp run` and the commonsense node. Hand edits are kept only
# for other models' entries: tuning rewrites its own model's entry.
"""


@dataclass(frozen=True)
class MonitorCalibration:
    """How the monitor decides for one model."""

    model: str
    variant: Variant
    threshold: float
    examples: tuple[TaskExample, ...] = ()
    tuned_on: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"variant": self.variant.name, "threshold": self.threshold}
        if self.examples:
            entry["examples"] = [example.to_dict() for example in self.examples]
        if self.tuned_on:
            entry["tuned_on"] = dict(self.tuned_on)
        return entry


def default_config_path() -> Path:
    """`$COWP_MONITOR_CALIBRATION`, else `config/monitor_calibration.yaml` of the share."""
    configured = os.environ.get(CONFIG_ENV)
    return Path(configured) if configured else share_path("config", "monitor_calibration.yaml")


def _example(raw: Any, where: str) -> TaskExample:
    if not isinstance(raw, Mapping) or not {"task", "question", "answer"} <= set(raw):
        raise CowpError(f"{where}: each example needs task, question and answer")
    answer = str(raw["answer"])
    return TaskExample(
        str(raw["task"]), str(raw["question"]), answer, bool(raw.get("blocking", answer == "No"))
    )


def parse_entry(model: str, raw: Any, source: str) -> MonitorCalibration:
    """One model's entry, checked: a bad entry is an error, never a silent default."""
    where = f"{source}, model {model!r}"
    if not isinstance(raw, Mapping):
        raise CowpError(f"{where}: the entry must be a mapping with variant and threshold")
    if "variant" not in raw or "threshold" not in raw:
        raise CowpError(f"{where}: the entry needs variant and threshold")
    variant = get_variant(str(raw["variant"]))
    threshold = raw["threshold"]
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise CowpError(f"{where}: threshold must be a number, not {threshold!r}")
    examples = tuple(_example(e, where) for e in raw.get("examples") or ())
    if variant.cross_task and not examples:
        raise CowpError(
            f"{where}: variant {variant.name} needs its examples",
            hint="re-run `cowp monitor eval --tune` to write them",
        )
    tuned = raw.get("tuned_on") or {}
    return MonitorCalibration(model, variant, float(threshold), examples, tuned)


def load_calibrations(path: Path) -> dict[str, MonitorCalibration]:
    """Every entry of a calibration file."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as err:
        raise CowpError(f"cannot read monitor calibration {path}: {err.strerror}") from err
    except yaml.YAMLError as err:
        raise CowpError(f"monitor calibration {path} is not valid YAML: {err}") from err
    if not isinstance(data, Mapping) or not isinstance(data.get("models") or {}, Mapping):
        raise CowpError(f"monitor calibration {path}: expected 'models:' mapping names to entries")
    models = data.get("models") or {}
    return {str(name): parse_entry(str(name), raw, str(path)) for name, raw in models.items()}


def calibration_for(model: str, path: Path | None = None) -> MonitorCalibration | None:
    """The entry for `model`, or None when it has none.

    With no `path`, a missing default file also means None (a fresh install without
    tuning); a `path` the caller named must exist.
    """
    if path is None:
        path = default_config_path()
        if not path.is_file():
            return None
    return load_calibrations(path).get(model)


def write_calibration(
    path: Path, calibration: MonitorCalibration, *, keep_others: bool = True
) -> None:
    """Write (or replace) one model's entry, keeping the other models' entries."""
    models: dict[str, Any] = {}
    if keep_others and path.is_file():
        data = yaml.safe_load(path.read_text()) or {}
        models = dict(data.get("models") or {}) if isinstance(data, Mapping) else {}
    models[calibration.model] = calibration.to_dict()
    body = yaml.safe_dump({"models": models}, sort_keys=False, width=100, allow_unicode=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + body)


def tuned_on_record(
    split: str, split_by: str, point: Mapping[str, Any], meets_goal: bool, auc: float
) -> dict[str, Any]:
    """The `tuned_on` block: what the threshold was chosen on and what it did there."""
    return {
        "split": split,
        "split_by": split_by,
        **point,
        "auc": round(auc, 4),
        "meets_goal": meets_goal,
        "date": _dt.date.today().isoformat(),
    }


def examples_of(pool: Sequence[TaskExample], variant: Variant) -> tuple[TaskExample, ...]:
    """The examples an entry must carry: the pool for cross-task variants, else none."""
    return tuple(pool) if variant.cross_task else ()
