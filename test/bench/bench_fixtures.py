"""Shared builders for the benchmark tests: a small fill_cup world and its judge."""

from __future__ import annotations

from pathlib import Path

from cowp_ros.bench.annotations import (
    Effect,
    SituationEffect,
    TaskAnnotation,
    load_annotation,
)
from cowp_ros.bench.simulator import Episode, ScheduledEvent
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.tasks import TaskSpec, get_task

REPO = Path(__file__).resolve().parents[2]
ANNOTATIONS = REPO / "benchmarks" / "annotations"
DATASET = REPO.parent / "shared" / "data" / "cowp"
PRESENT = ["cup_1", "faucet_1", "table_1", "bowl_1", "pan_1", "fork_1"]


def fill_cup() -> tuple[TaskSpec, PlanningTask, TaskAnnotation]:
    spec = get_task("fill_cup")
    world = keep_objects(spec.load(), PRESENT)
    return spec, world, load_annotation(ANNOTATIONS / "fill_cup.yaml")


def disables(target: str) -> SituationEffect:
    return SituationEffect(Effect.DISABLES_OBJECT, target, "", "test")


def situation(text: str, action: str, target: str | None = "cup_1", **kw: object) -> ScheduledEvent:
    effect = kw.pop("effect", None) or disables(str(target))
    return ScheduledEvent("situation", f"4/{text}", text, action, 0, effect, "cup")  # type: ignore[arg-type]


def episode(*events: ScheduledEvent, max_attempts: int = 40) -> Episode:
    spec, world, annotation = fill_cup()
    return Episode(spec, world, tuple(events), annotation, max_attempts=max_attempts)
