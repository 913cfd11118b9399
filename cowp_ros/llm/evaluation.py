"""How good and how fast is the configured model at the questions COWP asks?

Two question sets:

* The project's check set (`data/checkset.yaml`): monitor questions with blocking *and*
  benign situations (so a model that says "no" to everything does not look good),
  acquirer substitute questions, and pick-one selection questions, each with the
  answer common sense expects.
* A reproducible sample of the original COWP system's GPT-3 questions
  (`gpt3_answers/experience_task_*.txt` in the public dataset: a `raw prompt:` line,
  then GPT-3's answer). GPT-3's answers are one model's, not ground truth, so this is
  reported as *agreement*, never as accuracy.

Latency is measured per answer on uncached calls; the median and 95th percentile go
in the report beside the machine's load, since two shared cores make timings noisy.
"""

from __future__ import annotations

import math
import os
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.completion import match_option, parse_yes_no
from cowp_ros.llm.language_model import Example

DATASET_ENV = "COWP_DATASET_DIR"


@dataclass(frozen=True)
class CheckItem:
    """One question with the answer we compare against."""

    kind: str
    """monitor, acquirer, selection, gpt3-yes-no or gpt3-choice."""
    question: str
    expect: bool | str
    options: tuple[str, ...] = ()
    group: str = ""

    @property
    def is_yes_no(self) -> bool:
        return isinstance(self.expect, bool)


@dataclass(frozen=True)
class ItemAnswer:
    """What the model answered to one item, and how long it took."""

    item: CheckItem
    got: bool | str | None
    p_yes: float | None
    seconds: float
    cached: bool

    @property
    def correct(self) -> bool:
        return self.got == self.item.expect


def load_checkset(path: Path | None = None) -> list[CheckItem]:
    """The check set shipped with the package (or another file of the same shape)."""
    if path is None:
        text = resources.files("cowp_ros.llm").joinpath("data/checkset.yaml").read_text()
    else:
        try:
            text = path.read_text()
        except OSError as err:
            raise CowpError(f"cannot read check set {path}: {err.strerror}.") from err
    data = yaml.safe_load(text) or {}
    items: list[CheckItem] = []
    for kind in ("monitor", "acquirer"):
        for entry in data.get(kind, []):
            if not isinstance(entry.get("expect"), bool):
                raise CowpError(f"check set: '{entry.get('q')}' needs expect: yes or no.")
            items.append(CheckItem(kind, entry["q"], entry["expect"], group=entry.get("group", "")))
    for entry in data.get("selection", []):
        options = tuple(str(option) for option in entry["options"])
        if entry["expect"] not in options:
            raise CowpError(f"check set: '{entry['q']}' expects an answer not in its options.")
        items.append(CheckItem("selection", entry["q"], str(entry["expect"]), options))
    return items


def default_dataset_dir() -> Path:
    """`$COWP_DATASET_DIR`, else the project's shared data beside the repository."""
    configured = os.environ.get(DATASET_ENV)
    if configured:
        return Path(configured)
    repository = Path(__file__).resolve().parents[2]
    return repository.parent / "shared" / "data" / "cowp"


_OPTIONS = re.compile(r"such as (.+?)\. which is the most suitable", re.IGNORECASE)


def parse_gpt3_answers(text: str) -> list[CheckItem]:
    """Questions and GPT-3's answers from one `experience_task_*.txt` file.

    Yes/no questions keep GPT-3's verdict; "which is the most suitable" questions keep
    the listed option GPT-3 named. Answers that name no verdict or no listed option
    (e.g. "a broom would be best") cannot be compared and are dropped.
    """
    lines = text.splitlines()
    items: list[CheckItem] = []
    for index, line in enumerate(lines[:-1]):
        if not line.startswith("raw prompt:"):
            continue
        question = line[len("raw prompt:") :].strip()
        answer = lines[index + 1].strip()
        if not question or not answer or answer.startswith(("raw prompt:", "prompt (raw)")):
            continue
        listed = _OPTIONS.search(question)
        if listed:
            options = tuple(option.strip() for option in listed.group(1).split(","))
            picked = match_option(answer, options)
            if picked is not None:
                items.append(CheckItem("gpt3-choice", question, options[picked], options))
            continue
        verdict = parse_yes_no(answer)
        if verdict is not None:
            items.append(CheckItem("gpt3-yes-no", question, verdict))
    return items


def load_gpt3_sample(directory: Path, sample: int, seed: int = 0) -> tuple[list[CheckItem], int]:
    """A reproducible sample of distinct GPT-3 questions, and how many there were."""
    files = sorted(directory.glob("experience_task_*.txt"))
    if not files:
        raise CowpError(
            f"no experience_task_*.txt files in {directory}.",
            hint=f"pass --gpt3-dir (or set {DATASET_ENV}) to the COWP dataset, or --no-gpt3",
        )
    unique: dict[str, CheckItem] = {}
    for path in files:
        for item in parse_gpt3_answers(path.read_text(errors="replace")):
            unique.setdefault(item.question, item)  # the first answer GPT-3 gave wins
    pool = list(unique.values())
    chosen = random.Random(seed).sample(pool, min(sample, len(pool)))
    return chosen, len(pool)


def ask(model: OpenAICompatibleModel, item: CheckItem, examples: Sequence[Example]) -> ItemAnswer:
    """Ask one item the way COWP asks its kind of question."""
    started = time.monotonic()
    if item.is_yes_no:
        verdict = model.ask_yes_no(item.question, examples=examples)
        return ItemAnswer(
            item, verdict.answer, verdict.p_yes, time.monotonic() - started, verdict.cached
        )
    choice = model.ask_choice(item.question, item.options, examples=examples)
    return ItemAnswer(item, choice.option, None, time.monotonic() - started, choice.cached)


def evaluate(
    model: OpenAICompatibleModel,
    items: Sequence[CheckItem],
    *,
    examples: Sequence[Example] = (),
    progress: Callable[[int, int, ItemAnswer], None] | None = None,
) -> list[ItemAnswer]:
    """Ask every item in order, reporting progress after each."""
    outcomes: list[ItemAnswer] = []
    for number, item in enumerate(items, start=1):
        outcome = ask(model, item, examples)
        outcomes.append(outcome)
        if progress is not None:
            progress(number, len(items), outcome)
    return outcomes


def evaluate_batched(
    model: OpenAICompatibleModel,
    items: Sequence[CheckItem],
    *,
    examples: Sequence[Example] = (),
) -> tuple[list[ItemAnswer], float]:
    """Ask each acquirer group as one numbered question; outcomes and total seconds."""
    groups: dict[str, list[CheckItem]] = {}
    for item in items:
        if item.kind == "acquirer" and item.group:
            groups.setdefault(item.group, []).append(item)
    outcomes: list[ItemAnswer] = []
    total = 0.0
    for members in groups.values():
        started = time.monotonic()
        verdicts = model.ask_batch([m.question for m in members], examples=examples)
        elapsed = time.monotonic() - started
        total += elapsed
        for member, verdict in zip(members, verdicts, strict=True):
            outcomes.append(ItemAnswer(member, verdict.answer, None, elapsed / len(members), False))
    return outcomes, total


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 of 20 values is the 19th smallest)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def auc(outcomes: Sequence[ItemAnswer]) -> float | None:
    """Probability that a "yes" item gets a higher P(yes) than a "no" item.

    Threshold-free: it shows whether P(yes) separates the classes even when a model's
    bias towards "yes" puts them all above 0.5.
    """
    positives = [o.p_yes for o in outcomes if o.item.expect is True and o.p_yes is not None]
    negatives = [o.p_yes for o in outcomes if o.item.expect is False and o.p_yes is not None]
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


@dataclass
class Summary:
    """Accuracy (or agreement) of one slice of outcomes."""

    name: str
    right: int
    asked: int
    unanswered: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.right / self.asked if self.asked else math.nan


def summarise(name: str, outcomes: Sequence[ItemAnswer]) -> Summary:
    summary = Summary(
        name,
        right=sum(o.correct for o in outcomes),
        asked=len(outcomes),
        unanswered=sum(o.got is None for o in outcomes),
    )
    area = auc(outcomes)
    if area is not None:
        summary.extra["auc"] = area
    return summary


def latency(outcomes: Sequence[ItemAnswer]) -> dict[str, float]:
    """Median and p95 seconds per uncached answer."""
    seconds = [o.seconds for o in outcomes if not o.cached]
    if not seconds:
        return {}
    return {
        "median_s": statistics.median(seconds),
        "p95_s": percentile(seconds, 0.95),
        "n": float(len(seconds)),
    }
