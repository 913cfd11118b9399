"""Score calibration items with the monitor's variants, and summarise them.

The questions are those the monitor asks at run time (same wording, examples, system
prompt), so a threshold chosen here transfers to `PlanMonitor`. Items are asked task by
task: the cross-task examples then stay the same for a run of questions and the model
server's prompt cache keeps them evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.paper.calibration.scoring import (
    Scored,
    TaskExample,
    Variant,
    ask_with,
)
from cowp_ros.methods.paper.calibration.situations import CalibrationItem, ground_step
from cowp_ros.methods.paper.calibration.thresholds import OperatingPoint, auc, operating_point
from cowp_ros.methods.paper.prompts import monitor_question
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases


@dataclass(frozen=True)
class ScoredItem:
    """One item's score under one variant."""

    item: CalibrationItem
    variant: str
    step_text: str
    scored: Scored

    def to_dict(self) -> dict[str, object]:
        reference = self.scored.reference
        return {
            "key": self.item.key,
            "task": self.item.task,
            "action": self.item.action,
            "situation": self.item.situation,
            "blocking": self.item.blocking,
            "kind": self.item.kind,
            "variant": self.variant,
            "question": self.scored.question,
            "p_yes": self.scored.answer.p_yes,
            "reference_p_yes": None if reference is None else reference.p_yes,
            "score": self.scored.score,
        }


@cache
def _phrases(task: str) -> ActionPhrases:
    return ActionPhrases(get_task(task).phrases)


def step_text(item: CalibrationItem) -> str:
    """The item's step in English, as the monitor would describe it."""
    step, task = ground_step(item.task, item.action)
    return _phrases(item.task).describe(step, task)


def build_example_pool(dev_items: Sequence[CalibrationItem]) -> list[TaskExample]:
    """Cross-task few-shot examples from dev items only: per task (in a fixed order) its
    first blocking and first benign item, round robin, so that the first few examples
    outside any one task come from several different tasks."""
    by_task: dict[str, dict[bool, CalibrationItem]] = {}
    for item in dev_items:
        by_task.setdefault(item.task, {}).setdefault(item.blocking, item)
    pool: list[TaskExample] = []
    for task in sorted(by_task):
        for blocking, item in sorted(by_task[task].items(), reverse=True):
            question = monitor_question(step_text(item), item.situation)
            pool.append(TaskExample(task, question, "No" if blocking else "Yes", blocking))
    return pool


Progress = Callable[[int, int, ScoredItem], None]


def score_items(
    model: LanguageModel,
    items: Sequence[CalibrationItem],
    variants: Sequence[Variant],
    pool: Sequence[TaskExample] = (),
    progress: Progress | None = None,
) -> dict[str, list[ScoredItem]]:
    """Every item under every variant: variant name -> scored items (items' order)."""
    ask = ask_with(model)
    ordered = sorted(items, key=lambda item: item.task)
    total = len(ordered) * len(variants)
    done = 0
    results: dict[str, list[ScoredItem]] = {}
    for variant in variants:
        by_key: dict[str, ScoredItem] = {}
        for item in ordered:
            text = step_text(item)
            scored = variant.score(ask, text, item.situation, item.task, pool)
            by_key[item.key] = ScoredItem(item, variant.name, text, scored)
            done += 1
            if progress is not None:
                progress(done, total, by_key[item.key])
        results[variant.name] = [by_key[item.key] for item in items]
    return results


def scores_and_labels(scored: Sequence[ScoredItem]) -> tuple[list[float], list[bool], int]:
    """Scores and labels of the items that have a score, and how many had none."""
    usable = [s for s in scored if s.scored.score is not None]
    return (
        [float(s.scored.score) for s in usable if s.scored.score is not None],
        [s.item.blocking for s in usable],
        len(scored) - len(usable),
    )


@dataclass(frozen=True)
class VariantSummary:
    """A variant on one split at one threshold."""

    variant: str
    point: OperatingPoint
    auc: float
    unscored: int


def summarise(scored: Sequence[ScoredItem], variant: str, threshold: float) -> VariantSummary:
    scores, labels, unscored = scores_and_labels(scored)
    return VariantSummary(
        variant, operating_point(scores, labels, threshold), auc(scores, labels), unscored
    )
