"""Does the decision hold when the same situation is said in other words?

    .venv/bin/python benchmarks/bench_paraphrases.py --split dev --json dev.json
    .venv/bin/python benchmarks/bench_paraphrases.py --split test --json test.json  # report only
    .venv/bin/python benchmarks/bench_paraphrases.py --smoke   # CI

Items: the paraphrase set of the split (benchmarks/paraphrases/<split>.yaml, README.md
there says how it was written): each canonical sentence and each of its rewordings,
labelled with the canonical sentence's decision. Each sentence is put to the method
through its own public entry point, as `cowp run` builds it: the registry's default
method (`--method` for another), its reasoners for the task, the `Monitor` port's
`check` on the closed-world plan from the canonical sentence's step on (the crowd's most
named step that the plan has; a distractor's own step). A task's plan is handed to the
method first when its monitor asks ahead (`MonitorPreparation`), as the loop does when a
plan is made, so a decision's time is its own questions'. The sentence is given without
the object it is about (as the calibration bench gives it): the method grounds it
from the words, which is part of what wording changes.

Printed per kind of rewording: how many, how often the decision differs from its
canonical sentence's (the flip rate, with its 95 % Wilson interval), the accuracy on the
rewordings and on their canonical sentences, and the model time per decision (p50 /
p95: the seconds of the questions the decision asked, as the method reports them). No
answer cache by default (`--cache` to use it): a cached answer takes no time, and the
run-to-run drift of the model's scores is part of what flips. Thresholds are never
chosen here, and the test split is for reporting only. With `--again` each canonical
sentence is asked once more at the end by fresh reasoners (row `canonical_again`): the
flip rate of the same words is the floor under the rewordings', the drift of the model's
scores near a cut.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_decision_time import percentile
from bench_grounded_thresholds import NEAR_MISSES, closed_world_plan

from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.paraphrases import (
    REWORDING_KINDS,
    CanonicalSources,
    ParaphraseGroup,
    load_paraphrases,
    read_near_misses,
)
from cowp_ros.bench.results import wilson
from cowp_ros.chaos.answers import SMOKE_HELP, answer_smoke_runs
from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
from cowp_ros.cowp.ports import Monitor, MonitorPreparation
from cowp_ros.cowp.situation import Situation
from cowp_ros.cowp.wording import sentence
from cowp_ros.errors import CowpError
from cowp_ros.llm.endpoint import open_model
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.llm.forwarding import ForwardingModel
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.grounded.method import GROUNDED_NAME
from cowp_ros.methods.grounded.questions import RESTATE_ASKS
from cowp_ros.methods.grounded.settings import GroundedSettings, default_config_path
from cowp_ros.methods.paper.calibration.situations import load_benign_situations
from cowp_ros.methods.registry import DEFAULT_METHOD, ReasonerContext, get_method
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

HERE = Path(__file__).resolve().parent
PARAPHRASES = {split: HERE / "paraphrases" / f"{split}.yaml" for split in ("dev", "test")}
CANONICAL = "canonical"
AGAIN = "canonical_again"
"""The canonical sentence asked once more, by a fresh set of reasoners after every other
item (`--again`): how often its own decision flips between two asks is the floor under a
rewording's flip rate (the run-to-run drift of the model's scores near a cut)."""


@dataclass
class Decided:
    """One sentence's decision: a canonical sentence (`kind` "canonical") or a rewording."""

    task: str
    group: int
    """The group's line in the paraphrase file (its id)."""
    kind: str
    text: str
    step: str
    label: bool
    """True: the situation blocks (the canonical sentence's decision, the judge files')."""
    blocks: bool | None = None
    """The method's decision (None: it failed, see `error`)."""
    questions: int = 0
    model_seconds: float = 0.0
    wall_seconds: float = 0.0
    error: str = ""
    restated: str = ""
    """What a restating monitor read the situation as ("" where it did not restate)."""
    scores: dict[str, float] = field(default_factory=dict)
    """Each question's score (log-odds of the answer that blocks) by its kind: what
    other thresholds would have decided is read from these without the model."""


def commit() -> str:
    """The checkout's commit, marked when the tree has changes (the figures' provenance)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


class TaskMonitors:
    """The method's monitor for each task, built once per task through the registry, as
    one run builds it (so what it keeps per task, a role's clean need, is kept)."""

    def __init__(self, method: str, model: LanguageModel) -> None:
        self.entry = get_method(method)
        self.model = model
        self._built: dict[str, Monitor] = {}
        self.prepared_seconds: dict[str, float] = {}

    def monitor(self, task_name: str) -> Monitor:
        if task_name not in self._built:
            spec = get_task(task_name)
            problem, plan = closed_world_plan(task_name)
            context = ReasonerContext(
                problem, spec.description, ActionPhrases(spec.phrases), self.model.name
            )
            if self.entry.warm is not None:
                self.entry.warm(self.model, spec.description)
            if self.entry.reasoners is None:
                raise CowpError(f"the {self.entry.name} method has no monitor to measure")
            monitor = self.entry.reasoners(self.model, context).monitor
            if isinstance(monitor, MonitorPreparation):
                asked = monitor.prepare(plan, problem)
                self.prepared_seconds[task_name] = round(sum(v.seconds or 0.0 for v in asked), 3)
            self._built[task_name] = monitor
        return self._built[task_name]


class CanonicalRestater(ForwardingModel):
    """A STAND-IN for a stronger model's restatement, not a model: the restatement a
    restating monitor asks for is the item's canonical sentence, every other question
    goes to the real model. What the flips come to with it is how far a restater that
    always finds the canonical state would take the method (`--restate-as-canonical`)."""

    def __init__(self, model: LanguageModel) -> None:
        super().__init__(model)
        self.canonical = ""

    def complete(self, prompt: str, **options: Any) -> str:
        if RESTATE_ASKS in prompt and self.canonical:
            return sentence(self.canonical) + "."
        return super().complete(prompt, **options)


def step_of(task_name: str, steps: Sequence[str]) -> str:
    """The first of `steps` the closed-world plan has (a situation is raised before it)."""
    actions = [base_action_name(s.action) for s in closed_world_plan(task_name)[1]]
    for step in steps:
        if step in actions:
            return step
    raise CowpError(f"task {task_name}: its plan has none of the steps {', '.join(steps)}")


def decide(monitors: TaskMonitors, item: Decided) -> None:
    """The method's decision on the item's sentence, at its step, with its time."""
    problem, plan = closed_world_plan(item.task)
    actions = [base_action_name(s.action) for s in plan]
    rest = list(plan[actions.index(item.step) :])
    focus = [arg for step in rest for arg in step.args]
    monitor = monitors.monitor(item.task)
    started = time.perf_counter()
    try:
        check = monitor.check(rest, Situation(item.text), problem, focus)
    except CowpError as err:
        item.error = err.message
        return
    item.wall_seconds = round(time.perf_counter() - started, 3)
    item.blocks = check.blocked is not None
    item.questions = len(check.verdicts)
    decisions = getattr(monitor, "decisions", None)
    if decisions:
        item.restated = getattr(decisions[-1], "restated", "")
    item.scores = {
        v.variant: round(v.score, 3)
        for v in check.verdicts
        if v.variant is not None and v.score is not None
    }
    item.model_seconds = round(sum(v.seconds or 0.0 for v in check.verdicts), 3)


def method_settings(method: str, model: str) -> dict[str, Any]:
    """The grounded method's settings for `model` and the file they came from (the
    figures depend on them: a settings file can switch restating on and move every
    threshold); other methods keep their own settings elsewhere."""
    if method != GROUNDED_NAME:
        return {}
    path = default_config_path()
    return {"file": str(path), **asdict(GroundedSettings.for_model(model, path))}


def items_of(
    groups: Sequence[ParaphraseGroup], sources: CanonicalSources, source: str
) -> list[Decided]:
    """Each group's canonical sentence, then its rewordings, at the canonical's step."""
    items: list[Decided] = []
    for group in groups:
        canonical = sources.resolve(group, source)
        step = step_of(group.task, canonical.steps)
        items.append(Decided(group.task, group.line, CANONICAL, canonical.text, step, group.blocks))
        items.extend(
            Decided(group.task, group.line, r.kind, r.text, step, group.blocks)
            for r in group.rewordings
        )
    return items


def line_of(item: Decided) -> str:
    """One decision as printed: the method's, then the label in brackets."""
    mark = "-    " if item.blocks is None else ("BLOCK" if item.blocks else "fine ")
    label = "BLOCK" if item.label else "fine "
    return f"{item.task:13} {item.kind:15} {mark} ({label}) {item.model_seconds:5.2f}s  {item.text}"


def share(hits: int, total: int) -> dict[str, Any]:
    """hits/total as a percentage with its 95 % Wilson interval."""
    if not total:
        return {"n": 0}
    low, high = wilson(hits, total) or (0.0, 100.0)
    return {"n": total, "pct": round(100.0 * hits / total, 1), "interval_pct": [low, high]}


def times(items: Sequence[Decided]) -> dict[str, float]:
    values = [i.model_seconds for i in items if i.blocks is not None]
    if not values:
        return {}
    return {"p50": round(percentile(values, 50), 2), "p95": round(percentile(values, 95), 2)}


def summarise(items: Sequence[Decided]) -> dict[str, Any]:
    """Per kind of rewording: flips against the canonical decision, accuracy on the
    rewordings and on their canonical sentences, model time; and over all rewordings."""
    canonical = {(i.task, i.group): i for i in items if i.kind == CANONICAL}
    decided = [i for i in items if i.blocks is not None]
    out: dict[str, Any] = {
        "canonical": {
            "accuracy": share(
                sum(1 for i in canonical.values() if i.blocks == i.label),
                sum(1 for i in canonical.values() if i.blocks is not None),
            ),
            "model_seconds": times(list(canonical.values())),
        },
        "errors": sum(1 for i in items if i.blocks is None),
    }
    kinds: dict[str, Any] = {}
    for kind in (*REWORDING_KINDS, "all", AGAIN):
        group = [
            i
            for i in decided
            if (i.kind not in (CANONICAL, AGAIN) and kind == "all") or i.kind == kind
            if canonical[(i.task, i.group)].blocks is not None
        ]
        if not group:
            continue
        bases = [canonical[(i.task, i.group)] for i in group]
        kinds[kind] = {
            "rewordings": len(group),
            "flip_rate": share(
                sum(1 for i, c in zip(group, bases, strict=True) if i.blocks != c.blocks),
                len(group),
            ),
            "flips_blocking_to_harmless": sum(
                1 for i, c in zip(group, bases, strict=True) if c.blocks and not i.blocks
            ),
            "flips_harmless_to_blocking": sum(
                1 for i, c in zip(group, bases, strict=True) if not c.blocks and i.blocks
            ),
            "accuracy": share(sum(1 for i in group if i.blocks == i.label), len(group)),
            "canonical_accuracy": share(sum(1 for c in bases if c.blocks == c.label), len(bases)),
            "model_seconds": times(group),
        }
    out["kinds"] = kinds
    return out


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| kind | rewordings | flip rate % | flips block->fine / fine->block | "
        "accuracy % (rewordings) | accuracy % (their canonical) | model s p50 / p95 |",
        "|---|---|---|---|---|---|---|",
    ]

    def pct(value: dict[str, Any]) -> str:
        return f"{value['pct']} [{value['interval_pct'][0]}, {value['interval_pct'][1]}]"

    for kind, row in summary["kinds"].items():
        seconds = row["model_seconds"]
        lines.append(
            f"| {kind} | {row['rewordings']} | {pct(row['flip_rate'])} | "
            f"{row['flips_blocking_to_harmless']} / {row['flips_harmless_to_blocking']} | "
            f"{pct(row['accuracy'])} | {pct(row['canonical_accuracy'])} | "
            f"{seconds.get('p50', '-')} / {seconds.get('p95', '-')} |"
        )
    return "\n".join(lines)


def summary_line(split: str, summary: dict[str, Any], groups: int) -> str:
    everything = summary["kinds"].get("all")
    canonical = summary["canonical"]
    if everything is None or not canonical["accuracy"]["n"]:
        return f"paraphrases {split}: no decision made ({summary['errors']} errors)"
    seconds = everything["model_seconds"]
    again = summary["kinds"].get(AGAIN)
    floor = f" (canonical asked again: {again['flip_rate']['pct']} %)" if again else ""
    return (
        f"paraphrases {split}: {everything['rewordings']} rewordings of {groups} canonical "
        f"sentences: flip rate {everything['flip_rate']['pct']} %{floor}, accuracy "
        f"{everything['accuracy']['pct']} % on the rewordings vs "
        f"{canonical['accuracy']['pct']} % canonical, model time p50 "
        f"{seconds.get('p50', '-')} s / p95 {seconds.get('p95', '-')} s per decision, "
        f"{summary['errors']} errors"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument(
        "--paraphrases", type=Path, help="the paraphrase file (default: the split's)"
    )
    parser.add_argument("--dataset", default=str(default_dataset_dir()))
    parser.add_argument(
        "--method",
        default=DEFAULT_METHOD,
        help=f"the situation method (default: the project's default, {DEFAULT_METHOD})",
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="ask each canonical sentence once more at the end, with fresh reasoners: its "
        "own flip rate is the run-to-run floor under the rewordings'",
    )
    parser.add_argument(
        "--restate-as-canonical",
        action="store_true",
        help="a STAND-IN for a stronger restater, not a model: a restating monitor's "
        "restatement is the group's canonical sentence (set restate: true in the "
        "method's settings); the other questions go to the model",
    )
    parser.add_argument("--limit", type=int, help="only the first N groups")
    parser.add_argument("--json", type=Path, help="write the items and the summary here")
    parser.add_argument(
        "--cache", action="store_true", help="use the answer cache (times then mean little)"
    )
    parser.add_argument(
        "--smoke", action="store_true", help=f"two groups of the dev set; {SMOKE_HELP}"
    )
    add_llm_arguments(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.split, args.limit = "dev", 2
    command = shlex.join([sys.executable, *sys.argv])
    try:
        path = args.paraphrases or PARAPHRASES[args.split]
        paraphrases = load_paraphrases(path)
        if paraphrases.split != args.split:
            raise CowpError(f"{path} holds the {paraphrases.split} split, not {args.split}")
        groups = paraphrases.groups[: args.limit]
        sources = CanonicalSources(
            SituationDataset.load(args.dataset),
            load_benign_situations("all"),
            read_near_misses(NEAR_MISSES["dev"]),
        )
        items = items_of(groups, sources, paraphrases.source)
        args.no_cache = args.no_cache or not args.cache
        with contextlib.ExitStack() as stack:
            if args.smoke:
                answer_smoke_runs(args, stack)
            with open_model(settings_from_args(args)) as opened:
                restater = CanonicalRestater(opened) if args.restate_as_canonical else None
                model: LanguageModel = restater or opened
                monitors = TaskMonitors(args.method, model)
                canonical_of = {(i.task, i.group): i.text for i in items if i.kind == CANONICAL}
                for item in items:
                    if restater is not None:
                        restater.canonical = canonical_of[(item.task, item.group)]
                    decide(monitors, item)
                    print(line_of(item))
                if args.again:
                    again = TaskMonitors(args.method, model)
                    for first in [i for i in items if i.kind == CANONICAL]:
                        item = dataclasses.replace(first, kind=AGAIN, blocks=None, error="")
                        decide(again, item)
                        print(line_of(item))
                        items.append(item)
                name = model.name
    except CowpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    summary = summarise(items)
    print(table(summary))
    if args.json:
        kept = {
            "command": command,
            "commit": commit(),
            "split": args.split,
            "paraphrases": str(path),
            "method": args.method,
            "model": name,
            "cached": not args.no_cache,
            "restatements": "STAND-IN: each group's canonical sentence"
            if args.restate_as_canonical
            else "the model's",
            "settings": method_settings(args.method, name),
            "asked_ahead_seconds": monitors.prepared_seconds,
            "summary": summary,
            "items": [asdict(i) for i in items],
        }
        args.json.write_text(json.dumps(kept, indent=1))
    print(summary_line(args.split, summary, len(groups)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
