"""Harmless sentences from the dataset itself: each situation's normal state.

Bench v4's harmless class had three sentences of the dataset in the test tasks (those
the judge files call `no_effect`) beside distractors written by the team and outside.
The dataset gives more: with every situation the crowd reported its opposite, the
normal state ("the chair is broken" / "a chair unbroken."). Said where the situation
would arise, the normal state changes nothing by definition, and it names the same
object in nearly the same words: a method that reads nouns, or that reads any sentence
about an object as trouble, changes its plan for it. `opposite_distractors` writes them
in the format `cowp bench --distractors` reads, each tied to its task and to the step
most people put the situation at, kept word for word (typos included: they are the
dataset's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.errors import CowpError
from cowp_ros.tasks import TaskSpec

KIND = "dataset_opposite"


def opposite_distractors(
    specs: Sequence[TaskSpec], dataset: SituationDataset
) -> list[dict[str, Any]]:
    """One distractor per situation of `specs` with an opposite, at its commonest step;
    a sentence that is the same for two situations of a task is written once."""
    found: list[dict[str, Any]] = []
    for spec in specs:
        if spec.dataset_id is None:
            raise CowpError(f"task {spec.name} has no dataset situations")
        seen: set[str] = set()
        for situation in dataset.for_task(spec.dataset_id):
            text = situation.opposite.strip()
            wording = text.lower().rstrip(".").strip()
            if not text or not situation.at_actions or wording in seen:
                continue
            seen.add(wording)
            step = max(situation.at_actions, key=lambda a: (a[1], a[0]))[0]
            found.append(
                {"text": text, "task": spec.name, "step": step, "kind": KIND,
                 "of": situation.text}
            )  # fmt: skip
    return found
