"""Shared builders for the benchmark tests: a small fill_cup world and its judge."""

from __future__ import annotations

from pathlib import Path

from cowp_ros.bench.annotations import (
    Effect,
    SituationEffect,
    TaskAnnotation,
    load_annotation,
)
from cowp_ros.bench.simulator import ScheduledEvent, TrialWorld
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import TaskSpec, get_task

REPO = Path(__file__).resolve().parents[2]
ANNOTATIONS = REPO / "benchmarks" / "annotations"
DATASET = default_dataset_dir()
PRESENT = ["cup_1", "faucet_1", "table_1", "bowl_1", "pan_1", "fork_1"]
FILL_CUP_PLAN = (
    PlanStep("find_faucet", ("faucet_1",)),
    PlanStep("turnon_faucet", ("faucet_1",)),
    PlanStep("find_cup", ("cup_1",)),
    PlanStep("hold_cup", ("cup_1",)),
    PlanStep("fill_cup", ("cup_1", "faucet_1")),
    PlanStep("place_cup", ("cup_1", "table_1")),
)
"""fill_cup's closed-world plan over its own objects."""


def fill_cup(present: list[str] | None = None) -> tuple[TaskSpec, PlanningTask, TaskAnnotation]:
    spec = get_task("fill_cup")
    world = keep_objects(spec.load_house(), present or PRESENT)
    return spec, world, load_annotation(ANNOTATIONS / "fill_cup.yaml")


def disables(*targets: str) -> SituationEffect:
    return SituationEffect(Effect.DISABLES, tuple(targets), "", "test")


def situation(
    text: str,
    action: str,
    target: str | None = "cup_1",
    *,
    effect: SituationEffect | None = None,
    blocking: bool = True,
) -> ScheduledEvent:
    """A dataset-like situation; blocking unless said otherwise (the runner decides that
    per trial, see `runner.classify`)."""
    effect = effect or disables(str(target))
    targets = effect.targets if effect.effect is Effect.DISABLES else ()
    return ScheduledEvent(
        "situation", f"4/{text}", text, action, 0, effect, "cup", blocking, targets
    )


def world(
    *events: ScheduledEvent, max_attempts: int = 40, present: list[str] | None = None
) -> TrialWorld:
    spec, task, annotation = fill_cup(present)
    return TrialWorld(spec, task, tuple(events), annotation, max_attempts=max_attempts)


def episode(*events: ScheduledEvent, max_attempts: int = 40) -> TrialWorld:
    """The world of a small fill_cup trial (hand methods `.view()`, read `.record`)."""
    return world(*events, max_attempts=max_attempts)
