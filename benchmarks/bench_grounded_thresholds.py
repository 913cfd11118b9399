"""The grounded method's decision, situation by situation, and its thresholds.

    .venv/bin/python benchmarks/bench_grounded_thresholds.py --split dev   # choose
    .venv/bin/python benchmarks/bench_grounded_thresholds.py --split test  # report only
    .venv/bin/python benchmarks/bench_grounded_thresholds.py --smoke       # CI
    .venv/bin/python benchmarks/bench_grounded_thresholds.py --split dev --propose \
        --llm-url URL --llm-model NAME --json dev.json   # another model's entry
    .venv/bin/python benchmarks/bench_grounded_thresholds.py --propose \
        --from-json benchmarks/results/grounded_thresholds/dev.json --llm-model qwen2.5-coder-1.5b

Items: every dataset situation of the split's tasks at every step the crowd named, and
the split's benign distractors at their step. Each is put to the grounded monitor as the
closed-world plan meets it (the remaining plan from that step on, with the task's own
objects). Its label: blocking when the judge file's effect stops a remaining step
(disables an object a remaining step uses, release steps aside, or puts a remaining
step's action beyond the robot's skills); harmless otherwise.

It prints how each item was decided (grounding alone, questions about the object, one
question about the task) with its scores (use, dirty, need: each the log-odds of the
answer that blocks), the AUC of each question's score, for the use and task questions
the threshold that maximises (true blocks - false alarms) on the items, weighted by
crowd count, and the object decision under the configured thresholds (no use, or dirty
while the task needs it clean). Thresholds are chosen on `--split dev` only, by the rule of
`cowp_ros.methods.grounded.calibration` (`--propose` prints them as an entry of
config/grounded.yaml; `--from-json` chooses from a kept run's scores without asking the
model again); `--split test` reports what they do there.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.bench.annotations import Effect, load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.chaos.answers import SMOKE_HELP, answer_smoke_runs
from cowp_ros.cli.bench import read_distractors
from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.endpoint import open_model
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.grounded.calibration import (
    MARGIN,
    ScoredItem,
    blocks,
    choose_object_thresholds,
    choose_world_threshold,
    object_gain,
)
from cowp_ros.methods.grounded.grounding import ground, plan_objects
from cowp_ros.methods.grounded.questions import examples_for
from cowp_ros.methods.grounded.settings import GroundedSettings
from cowp_ros.methods.grounded.situation_monitor import (
    NEED,
    STATE,
    TASK_STATE,
    GroundedMonitor,
    Thresholds,
    uses,
)
from cowp_ros.methods.paper.calibration.situations import load_benign_situations
from cowp_ros.methods.paper.calibration.thresholds import auc
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import get_task, split_tasks


@dataclass
class Item:
    task: str
    text: str
    action: str
    blocking: bool
    weight: int
    kind: str  # dataset | distractor | near_miss
    by: str = ""
    score: float | None = None
    dirty: float | None = None  # the state question's score ("is it dirty?")
    need: float | None = None  # the need question's score ("must it be clean?")
    task_dirty: float | None = None  # log-odds of "yes": the task's own words call it dirty


NEAR_MISSES = {
    "dev": Path(__file__).resolve().parent / "distractors" / "dev_near_miss.yaml",
    "test": Path(__file__).resolve().parents[1].parent
    / "shared/data/distractors/test_near_miss.yaml",
}
"""Harmless sentences about plan objects that sound like trouble, per split: the dev
ones are the team's (thresholds are chosen with them), the test ones were written
outside the team (reported only)."""


@functools.cache
def closed_world_plan(task_name: str) -> tuple[PlanningTask, tuple[PlanStep, ...]]:
    """The task as the robot knows it and its closed-world plan (planned once per task:
    every item of a task meets the same plan; the monitor only reads the problem)."""
    problem = get_task(task_name).load()
    return problem, tuple(make_planner("pyperplan").solve(problem, 60.0).steps)


def near_miss_items(task_name: str, path: Path | None) -> list[Item]:
    """The near misses of `task_name` at their step (harmless by construction)."""
    if path is None or not path.is_file():
        return []
    actions = [base_action_name(s.action) for s in closed_world_plan(task_name)[1]]
    return [
        Item(task_name, d.text, d.step, False, 1, "near_miss")
        for d in read_distractors(str(path))
        if d.task == task_name and d.step in actions
    ]


def items_for(task_name: str, dataset: SituationDataset, annotations) -> list[Item]:
    spec = get_task(task_name)
    steps = list(closed_world_plan(task_name)[1])
    actions = [base_action_name(s.action) for s in steps]
    found: list[Item] = []
    annotation = annotations[task_name]
    for situation in dataset.for_task(spec.dataset_id or 0):
        effect = annotation.effect_of(situation, spec)
        for action, count in situation.at_actions:
            if action not in actions or count <= 0:
                continue
            rest = steps[actions.index(action) :]
            if effect.effect is Effect.BEYOND_SKILLS:
                blocking = any(base_action_name(s.action) == action for s in rest)
            elif effect.effect is Effect.DISABLES:
                targets = set(effect.targets_at(action))
                blocking = any(
                    base_action_name(s.action) not in spec.release_actions and targets & set(s.args)
                    for s in rest
                )
            else:
                blocking = False
            found.append(Item(task_name, situation.text, action, blocking, count, "dataset"))
    for benign in load_benign_situations("all"):
        if benign.task == task_name and benign.action in actions:
            found.append(Item(task_name, benign.situation, benign.action, False, 1, "distractor"))
    return found


def decide(items: Sequence[Item], model: LanguageModel, only: str | None = None) -> None:
    """Score each item with the monitor's questions (thresholds play no part here), as
    the model's settings ask them (restated first where they say so)."""
    settings = GroundedSettings.for_model(model.name)
    restate = settings.restate
    for item in items:
        spec = get_task(item.task)
        problem, plan = closed_world_plan(item.task)
        steps = list(plan)
        actions = [base_action_name(s.action) for s in steps]
        rest = steps[actions.index(item.action) :]
        # Thresholds that ask every question of an object's decision, for its scores.
        monitor = GroundedMonitor(
            model,
            spec.description,
            Thresholds(use=99.0, world=99.0, dirty=-99.0, need=-99.0),
            examples=examples_for(restate),
            ask_all=True,
            restate=restate,
            read_both=settings.read_both,
        )
        situation = Situation(item.text)
        usable = [o for o in plan_objects(rest) if any(uses(problem, s, o) for s in rest)]
        grounding = ground(situation, problem, usable)
        way = (
            "grounding"
            if grounding.subject is not None and not grounding.in_plan
            else "question"
            if grounding.subject is not None
            else "world question"
        )
        if only is not None and way != only:
            item.by = way
            continue
        decision, _ = monitor.decide(situation, grounding, problem)
        item.by = decision.by
        item.score = decision.score
        item.dirty = decision.score_of(STATE)
        item.need = decision.score_of(NEED)
        expected = decision.score_of(TASK_STATE)
        item.task_dirty = None if expected is None else -expected


def best_threshold(items: Sequence[Item]) -> tuple[float, float]:
    """(threshold, weighted true blocks - false alarms) over the items' scores."""
    scored = [i for i in items if i.score is not None]
    candidates = sorted({i.score for i in scored if i.score is not None})
    best = (float("inf"), 0.0)
    for index, value in enumerate(candidates):
        lower = candidates[index - 1] if index else value - 1.0
        threshold = round((lower + value) / 2, 3)
        gain = sum(
            (i.weight if i.blocking else -i.weight)
            for i in scored
            if i.score is not None and i.score >= threshold
        )
        if gain > best[1]:
            best = (threshold, gain)
    return best


def scored(item: Item) -> ScoredItem:
    """An object item as the threshold choice reads it."""
    return ScoredItem(
        item.blocking, item.weight, item.score or 0.0, item.dirty, item.need, item.task_dirty
    )


def object_items(items: Sequence[Item]) -> list[ScoredItem]:
    return [scored(i) for i in items if i.by == "question" and i.score is not None]


def object_gains(items: Sequence[Item], settings: GroundedSettings) -> dict[str, float]:
    """Crowd-weighted (true blocks - false alarms) of the object decision on `items`: at
    the configured thresholds, and the most any (use, dirty, need) thresholds reach (each
    at a midpoint between neighbouring scores, however close to an item)."""
    group = object_items(items)
    best = choose_object_thresholds(group, margin=0.0)
    configured = object_gain(
        group, settings.use_threshold, settings.dirty_threshold, settings.need_threshold
    )
    return {"configured": configured, "best": best.gain if best else 0.0}


def blocks_by_object_questions(item: Item, settings: GroundedSettings) -> bool:
    """The object decision under the configured thresholds: no use, or dirty and needed
    clean (by a task whose own words do not call it dirty)."""
    return item.score is not None and blocks(
        scored(item), settings.use_threshold, settings.dirty_threshold, settings.need_threshold
    )


def proposal(items: Sequence[Item], settings: GroundedSettings, margin: float) -> dict[str, Any]:
    """The thresholds the items choose by `cowp_ros.methods.grounded.calibration`'s rule;
    the stand-in settings are kept from the configured entry (they are not chosen from
    these items: docs/grounded.md says how)."""
    chosen = choose_object_thresholds(object_items(items), margin)
    if chosen is None:
        raise CowpError(
            f"no thresholds keep {margin} from every item they decide",
            hint="lower --margin, or read the items' scores: the model may not separate them",
        )
    world = choose_world_threshold(
        [(i.score, i.blocking) for i in items if i.by == "world question" and i.score is not None],
        margin,
    )
    entry: dict[str, float | int] = {
        "use_threshold": chosen.use,
        "dirty_threshold": chosen.dirty,
        "need_threshold": chosen.need,
        "world_threshold": world.threshold if world else settings.world_threshold,
        "role_threshold": settings.role_threshold,
        "max_candidates": settings.max_candidates,
        "min_similarity": settings.min_similarity,
    }
    GroundedSettings.parse(settings.model, entry, "the proposal")  # a valid entry, checked
    return {
        "margin": margin,
        "entry": entry,
        "object_gain": chosen.gain,
        "object_best_gain": chosen.best_gain,
        "closest_decided_item": chosen.margin,
        "world": None if world is None else dataclasses.asdict(world),
    }


KEPT_SETTINGS = ("role_threshold", "max_candidates", "min_similarity")


def entry_yaml(model: str, proposed: dict[str, Any], split: str) -> str:
    """The proposal as an entry of config/grounded.yaml's `models:`."""
    lines = [
        f"  {model}:",
        f"    # bench_grounded_thresholds.py --split {split} --propose: each threshold at least",
        f"    # {proposed['margin']} from every {split} item it decides; object gain "
        f"{proposed['object_gain']:g} (at most {proposed['object_best_gain']:g} any reach)",
    ]
    for key, value in proposed["entry"].items():
        note = "  # kept: a stand-in setting (docs/grounded.md)" if key in KEPT_SETTINGS else ""
        lines.append(f"    {key}: {value}{note}")
    return "\n".join(lines)


def object_decision_report(items: Sequence[Item], settings: GroundedSettings) -> dict[str, object]:
    """The object decision as configured, and the dirt questions' own separation (on the
    items the use question leaves usable, where they decide)."""
    group = [i for i in items if i.by == "question"]
    blocking = [i for i in group if i.blocking]
    decided = [i for i in group if blocks_by_object_questions(i, settings)]
    left = [
        i
        for i in group
        if i.score is not None and i.score < settings.use_threshold and i.dirty is not None
    ]
    line: dict[str, object] = {
        "recall": f"{sum(1 for i in decided if i.blocking)}/{len(blocking)}",
        "false_alarms": f"{sum(1 for i in decided if not i.blocking)}/{len(group) - len(blocking)}",
        "thresholds": {
            "use": settings.use_threshold,
            "dirty": settings.dirty_threshold,
            "need": settings.need_threshold,
        },
        "left_usable": len(left),
        "false_alarms_by_kind": {
            kind: f"{sum(1 for i in decided if i.kind == kind and not i.blocking)}/"
            f"{sum(1 for i in group if i.kind == kind and not i.blocking)}"
            for kind in ("dataset", "distractor", "near_miss")
        },
    }
    labels = [i.blocking for i in left]
    if any(labels) and not all(labels):
        line["dirty_auc_on_left"] = round(auc([i.dirty or 0.0 for i in left], labels), 3)
        needed = [i for i in left if i.need is not None]
        line["need_auc_on_left"] = round(
            auc([i.need or 0.0 for i in needed], [i.blocking for i in needed]), 3
        )
    return line


def reliability_groups(
    items: Sequence[Item], settings: GroundedSettings
) -> dict[str, list[tuple[float, bool]]]:
    """(model's probability of the blocking answer, the item blocks) per kind of question:
    the use question on every object item, the dirt and need questions on the items the
    use question leaves usable (where they decide), the task question on its items."""
    objects = [i for i in items if i.by == "question" and i.score is not None]
    left = [i for i in objects if (i.score or 0.0) < settings.use_threshold]
    return {
        "use": [(sigmoid(i.score or 0.0), i.blocking) for i in objects],
        "dirty": [(sigmoid(i.dirty), i.blocking) for i in left if i.dirty is not None],
        "need": [(sigmoid(i.need), i.blocking) for i in left if i.need is not None],
        "task": [
            (sigmoid(i.score), i.blocking)
            for i in items
            if i.by == "world question" and i.score is not None
        ],
    }


def sigmoid(score: float) -> float:
    return 1.0 / (1.0 + math.exp(-score))


def plot_reliability(
    groups: dict[str, list[tuple[float, bool]]], path: Path, title: str, bins: int = 5
) -> None:
    """A reliability plot per kind of question: items binned by the model's probability
    of the blocking answer against the share that blocks, with each bin's count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 4), sharey=True)
    for axis, (kind, pairs) in zip(axes, groups.items(), strict=True):
        axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        centres, shares, counts = [], [], []
        for b in range(bins):
            low, high = b / bins, (b + 1) / bins
            inside = [
                blocks for p, blocks in pairs if low <= p < high or (b == bins - 1 and p == 1)
            ]
            if inside:
                centres.append((low + high) / 2)
                shares.append(sum(inside) / len(inside))
                counts.append(len(inside))
        axis.plot(centres, shares, marker="o")
        for x, y, n in zip(centres, shares, counts, strict=True):
            axis.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
        axis.set_title(f"{kind} ({len(pairs)} items)")
        axis.set_xlabel("P(blocking answer)")
        axis.set_xlim(0, 1)
        axis.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel("share that blocks (judge files)")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def report(items: Sequence[Item], settings: GroundedSettings) -> dict[str, object]:
    out: dict[str, object] = {
        "object decision": object_decision_report(items, settings),
        "object decision gain (configured, best)": object_gains(items, settings),
    }
    for by in ("grounding", "question", "world question"):
        group = [i for i in items if i.by == by]
        blocking = [i for i in group if i.blocking]
        line: dict[str, object] = {
            "items": len(group),
            "blocking": len(blocking),
            "harmless": len(group) - len(blocking),
        }
        scored = [i for i in group if i.score is not None]
        if scored and blocking and len(blocking) < len(group):
            line["auc"] = round(
                auc([i.score or 0.0 for i in scored], [i.blocking for i in scored]), 3
            )
            line["best_threshold"], line["best_gain"] = best_threshold(scored)
        threshold = {
            "question": settings.use_threshold,
            "world question": settings.world_threshold,
        }.get(by)
        blocks = [
            i
            for i in group
            if by != "grounding" and i.score is not None and threshold is not None
            if i.score >= threshold
        ]
        line["configured_threshold"] = threshold
        line["recall"] = f"{sum(1 for i in blocks if i.blocking)}/{len(blocking)}"
        line["false_alarms"] = (
            f"{sum(1 for i in blocks if not i.blocking)}/{len(group) - len(blocking)}"
        )
        out[by] = line
    return out


def split_items(
    split: str, dataset_dir: str, near_misses: Path | None = None, tasks: int | None = None
) -> tuple[list[str], list[Item]]:
    """The split's tasks (the first `tasks` of them) and their items: every dataset
    situation at every step the crowd named, the benign distractors, and the near misses
    (`near_misses`, else the split's own)."""
    dataset = SituationDataset.load(dataset_dir)
    annotations = load_annotations()
    names = split_tasks()[split][:tasks]
    misses = near_misses or NEAR_MISSES[split]
    items = [
        item
        for task in names
        for item in [*items_for(task, dataset, annotations), *near_miss_items(task, misses)]
    ]
    return names, items


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--dataset", default=str(default_dataset_dir()))
    parser.add_argument("--json", type=Path, help="write the items and the summary here")
    parser.add_argument(
        "--plot", type=Path, help="write a reliability plot per kind of question here (.png)"
    )
    parser.add_argument(
        "--near-misses",
        type=Path,
        default=None,
        help="harmless near-miss sentences to add (default: the split's, "
        "benchmarks/distractors/dev_near_miss.yaml or ../shared/data/distractors/"
        "test_near_miss.yaml)",
    )
    parser.add_argument(
        "--only",
        choices=("question", "world question"),
        help="score only the items decided this way (the others are listed unscored)",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="PATH",
        help="read the items' scores from a file --json wrote instead of asking a model "
        "(its split is its tasks'; give --llm-model when the file does not name its model)",
    )
    parser.add_argument(
        "--propose",
        action="store_true",
        help="choose the model's thresholds from the dev items by one rule and print them "
        "as an entry of config/grounded.yaml (docs/grounded.md, 'With a stronger model server')",
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=MARGIN,
        help=f"how far a proposed threshold keeps from every item it decides (default {MARGIN})",
    )
    parser.add_argument("--smoke", action="store_true", help=f"six items of one task; {SMOKE_HELP}")
    add_llm_arguments(parser)
    args = parser.parse_args(argv)
    try:
        if args.from_json:
            return _report(args, *_kept_items(args))
        if args.propose and args.split != "dev":
            raise CowpError(
                f"--propose chooses thresholds, and they are chosen on the dev tasks only, "
                f"not on --split {args.split}",
                hint="run --split dev --propose; --split test reports what they do there",
            )
        tasks, items = split_items(
            args.split, args.dataset, args.near_misses, tasks=1 if args.smoke else None
        )
        with contextlib.ExitStack() as stack:
            if args.smoke:
                items = items[:6]
                answer_smoke_runs(args, stack)
            with open_model(settings_from_args(args)) as model:
                decide(items, model, args.only)
                name = model.name
        return _report(args, tasks, items, name)
    except CowpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _kept_items(args: argparse.Namespace) -> tuple[list[str], list[Item], str]:
    """The tasks, items and model of a file --json wrote (its split overrides --split)."""
    path: Path = args.from_json
    try:
        kept = json.loads(path.read_text())
        items = [Item(**raw) for raw in kept["items"]]
    except OSError as err:
        raise CowpError(f"cannot read {path}: {err.strerror}") from None
    except (ValueError, KeyError, TypeError) as err:
        raise CowpError(
            f"{path} is not a file bench_grounded_thresholds.py --json wrote ({err})",
            hint="give the JSON file of a --json run",
        ) from None
    args.split = split_of(items, path)
    if args.propose and args.split != "dev":
        raise CowpError(
            f"{path} holds {args.split} items; thresholds are chosen on the dev tasks only",
            hint="propose from a --split dev run's file",
        )
    name = kept.get("model") or args.llm_model
    if not name:
        raise CowpError(
            f"{path} does not say which model scored its items",
            hint="give --llm-model NAME (its entry in config/grounded.yaml is reported)",
        )
    tasks = kept.get("tasks") or sorted({i.task for i in items})
    return list(tasks), items, name


def split_of(items: Sequence[Item], source: Path) -> str:
    """The split the items' tasks belong to (read from the tasks, not from a label)."""
    splits = {split for split, names in split_tasks().items() for i in items if i.task in names}
    if len(splits) != 1:
        raise CowpError(
            f"{source}: its items come from {len(splits)} splits ({', '.join(sorted(splits))})",
            hint="give a file of one split's items (a --split dev or --split test run)",
        )
    return splits.pop()


def _report(args: argparse.Namespace, tasks: list[str], items: list[Item], model: str) -> int:
    settings = GroundedSettings.for_model(model)
    for item in items:
        scores = " ".join(
            "     -" if value is None else f"{value:6.2f}"
            for value in (item.score, item.dirty, item.need, item.task_dirty)
        )
        label = "BLOCK" if item.blocking else "fine "
        print(f"{item.task:10} {item.action:14} {label} {item.by:15} {scores}  {item.text}")
    summary = report(items, settings)
    proposed, failure = None, None
    if args.propose:
        try:
            proposed = summary["proposal"] = proposal(items, settings, args.margin)
        except CowpError as err:  # the scores are kept first: asking for them took long
            failure = err
    print(json.dumps({"split": args.split, "tasks": tasks, "model": model, **summary}, indent=1))
    if args.plot:
        title = f"{args.split} tasks, {settings.model}: P(blocking answer) vs blocking"
        plot_reliability(reliability_groups(items, settings), args.plot, title)
    if args.json:
        kept = {
            "split": args.split,
            "tasks": tasks,
            "model": model,
            "summary": summary,
            "items": [i.__dict__ for i in items],
        }
        args.json.write_text(json.dumps(kept, indent=1))
    if failure is not None:
        raise failure
    if proposed is not None:
        print(f"\nthe {args.split} items' entry for config/grounded.yaml (under models:):")
        print(entry_yaml(model, proposed, args.split))
    return 0


if __name__ == "__main__":
    sys.exit(main())
