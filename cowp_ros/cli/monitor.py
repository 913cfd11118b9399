"""`cowp monitor`: measure and calibrate the Plan Monitor on blocking and benign situations.

    cowp monitor eval --split test                 recall, false alarms, AUC per variant
    cowp monitor eval --split dev --tune           choose thresholds on dev, write config
    cowp monitor eval --variant plain --limit 4    a quick look (4 items per stratum)
    cowp monitor benign --split test --out F.yaml  the benign set, e.g. for cowp bench

Blocking situations are the public COWP dataset's (--dataset-dir); benign ones are the
project's own (cowp_ros/methods/paper/calibration/data/benign_situations.yaml). Each
variant's threshold is always chosen on the dev split (its answers come from the answer
cache after the first run), then applied to the split asked for, so test figures never
see a test answer during tuning. A PNG per model with every variant's ROC and precision/recall
curves goes to --plot-dir.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cowp_ros.cli.llm import add_llm_arguments, add_model_arguments, settings_from_args
from cowp_ros.errors import CowpError
from cowp_ros.llm.evaluation import DATASET_ENV, default_dataset_dir
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.paper.calibration.config import (
    MonitorCalibration,
    calibration_for,
    default_config_path,
    examples_of,
    tuned_on_record,
    write_calibration,
)
from cowp_ros.methods.paper.calibration.evaluation import (
    ScoredItem,
    build_example_pool,
    score_items,
    scores_and_labels,
    summarise,
)
from cowp_ros.methods.paper.calibration.plot import plot_curves
from cowp_ros.methods.paper.calibration.scoring import VARIANTS, get_variant
from cowp_ros.methods.paper.calibration.situations import (
    SPLIT_BY,
    CalibrationItem,
    assign_splits,
    load_benign_situations,
    load_items,
)
from cowp_ros.methods.paper.calibration.thresholds import (
    GOAL_FALSE_ALARM,
    GOAL_RECALL,
    OperatingPoint,
    choose_threshold,
    operating_point,
)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def open_model(args: argparse.Namespace) -> Iterator[LanguageModel]:
    """The configured server's model, or the embedded one (tests hand in a scripted one)."""
    from cowp_ros.llm.client import OpenAICompatibleModel
    from cowp_ros.llm.endpoint import llm_endpoint

    settings = settings_from_args(args)
    with llm_endpoint(settings, model_path=args.model_path, model_name=args.model) as endpoint:
        yield OpenAICompatibleModel(endpoint)


def limit_items(items: Sequence[CalibrationItem], per_stratum: int | None) -> list[CalibrationItem]:
    """The first `per_stratum` items of each (task, blocking) stratum, in order."""
    if per_stratum is None:
        return list(items)
    taken: dict[tuple[str, bool], int] = {}
    kept: list[CalibrationItem] = []
    for item in items:
        if taken.get(item.stratum, 0) < per_stratum:
            taken[item.stratum] = taken.get(item.stratum, 0) + 1
            kept.append(item)
    return kept


def _progress(log_every: int) -> Any:
    started = time.monotonic()

    def report(done: int, total: int, scored: ScoredItem) -> None:
        if done % log_every == 0 or done == total:
            load = os.getloadavg()[0]
            _say(
                f"  {done}/{total} asked ({time.monotonic() - started:.0f} s, load {load:.1f}): "
                f"{scored.variant} {scored.item.key}"
            )

    return report


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _percent(value: float) -> str:
    return f"{100 * value:5.1f}%"


def _row(variant: str, dev: OperatingPoint, split: OperatingPoint, auc: float) -> str:
    goal = "yes" if split.meets() else "no"
    return (
        f"  {variant:<19} {dev.threshold:>9.3f} "
        f"{_percent(dev.recall)} {_percent(dev.false_alarm_rate)}"
        f"   {_percent(split.recall)} {_percent(split.false_alarm_rate)} "
        f"{_percent(split.precision)} {auc:5.2f}  {goal}"
    )


def _eval(args: argparse.Namespace) -> int:
    if args.tune and args.split != "dev":
        raise CowpError("--tune chooses thresholds on the dev split only; drop --split test")
    variants = [get_variant(name) for name in (args.variant or list(VARIANTS))]
    dataset_dir = Path(args.dataset_dir) if args.dataset_dir else default_dataset_dir()
    benign = Path(args.benign) if args.benign else None
    everything = load_items(dataset_dir, "all", benign)
    splits = assign_splits(everything)
    dev = limit_items([i for i in everything if splits[i.key] == "dev"], args.limit)
    wanted = (
        dev
        if args.split == "dev"
        else limit_items(
            [i for i in everything if args.split == "all" or splits[i.key] == args.split],
            args.limit,
        )
    )
    pool = build_example_pool([i for i in everything if splits[i.key] == "dev"])
    asked = dev + [item for item in wanted if item not in dev]
    _say(
        f"{len(wanted)} {args.split} items ({sum(i.blocking for i in wanted)} blocking, "
        f"{sum(not i.blocking for i in wanted)} benign); thresholds from {len(dev)} dev items; "
        f"variants: {', '.join(v.name for v in variants)}"
    )
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    with open_model(args) as model:
        results = score_items(model, asked, variants, pool, _progress(args.log_every))
        model_name = model.name
        usage = model.usage
    seconds = time.monotonic() - started

    wanted_keys = {item.key for item in wanted}
    dev_keys = {item.key for item in dev}
    print(f"\nmodel {model_name}; split {args.split} (by {SPLIT_BY})")
    print(
        f"goal: recall >= {GOAL_RECALL:.0%} with false alarms <= {GOAL_FALSE_ALARM:.0%}; "
        "threshold chosen on dev, applied to the split"
    )
    print(
        f"  {'variant':<19} {'threshold':>9} {'dev rec':>6} {'dev FA':>6}   "
        f"{'recall':>6} {'FA':>6} {'prec':>6} {'AUC':>5}  goal"
    )
    series: dict[str, tuple[list[float], list[bool]]] = {}
    chosen_on_split: dict[str, OperatingPoint] = {}
    tuned: dict[str, tuple[OperatingPoint, float]] = {}
    for variant in variants:
        scored = results[variant.name]
        dev_scores, dev_labels, _ = scores_and_labels([s for s in scored if s.item.key in dev_keys])
        dev_point = choose_threshold(dev_scores, dev_labels)
        on_split = [s for s in scored if s.item.key in wanted_keys]
        summary = summarise(on_split, variant.name, dev_point.threshold)
        dev_summary = summarise(
            [s for s in scored if s.item.key in dev_keys], variant.name, dev_point.threshold
        )
        tuned[variant.name] = (dev_point, dev_summary.auc)
        series[variant.name] = scores_and_labels(on_split)[:2]
        chosen_on_split[variant.name] = summary.point
        print(_row(variant.name, dev_point, summary.point, summary.auc))
        if summary.unscored:
            print(f"    ({summary.unscored} items without P(yes) left out)")
    config = Path(args.config) if args.config else default_config_path()
    deployed = calibration_for(model_name, config) if config.is_file() else None
    if deployed is not None and deployed.variant.name in results:
        scores, labels, _ = scores_and_labels(
            [s for s in results[deployed.variant.name] if s.item.key in wanted_keys]
        )
        point = operating_point(scores, labels, deployed.threshold)
        print(
            f"deployed ({deployed.variant.name} >= {deployed.threshold:.3f}, from the config): "
            f"recall {_percent(point.recall).strip()}, false alarms "
            f"{_percent(point.false_alarm_rate).strip()} on {args.split}"
        )
    print(
        f"{usage.calls} model calls, {usage.cache_hits} answer-cache hits, {seconds:.0f} s; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
        f"({os.cpu_count()} cores)"
    )

    if not args.no_plot:
        path = Path(args.plot_dir) / f"monitor_{_safe(model_name)}_{args.split}.png"
        title = f"Plan Monitor, {model_name}, {args.split} split ({len(wanted)} situations)"
        print(f"plot: {plot_curves(series, chosen_on_split, path, title)}")
    if args.json:
        record = {
            "model": model_name,
            "split": args.split,
            "thresholds": {name: p.to_dict() for name, (p, _) in tuned.items()},
            "on_split": {name: p.to_dict() for name, p in chosen_on_split.items()},
            "items": [
                s.to_dict() for name in results for s in results[name] if s.item.key in wanted_keys
            ],
        }
        Path(args.json).write_text(json.dumps(record, indent=1))
        print(f"answers: {args.json}")
    if args.tune:
        # Variants are compared by dev AUC after the goal: one operating point on a few
        # dozen dev items is noisy (prevents and both differed by 0.001 in Youden's J
        # on the 1.5B model, and by 24 points of recall on test), the whole curve less so.
        best = max(
            variants,
            key=lambda v: (tuned[v.name][0].meets(), tuned[v.name][1], tuned[v.name][0].youden),
        )
        point, auc = tuned[best.name]
        calibration = MonitorCalibration(
            model_name,
            best,
            round(point.threshold, 4),
            examples_of(pool, best),
            tuned_on_record("dev", SPLIT_BY, point.to_dict(), point.meets(), auc),
        )
        write_calibration(config, calibration)
        print(
            f"tuned: {model_name} -> {best.name}, threshold {calibration.threshold:.3f} "
            f"(dev recall {_percent(point.recall).strip()}, false alarms "
            f"{_percent(point.false_alarm_rate).strip()}); written to {config}"
        )
    return 0


def _benign(args: argparse.Namespace) -> int:
    """Write the benign set (one split, optionally one task) as a YAML list.

    Each entry has `text` (what `cowp bench --distractors` reads), `task`, `step` and
    `kind`, so the file also serves a bench that matches distractors to their task.
    """
    items = load_benign_situations(args.split, Path(args.benign) if args.benign else None)
    if args.task:
        items = [item for item in items if item.task in args.task]
    if not items:
        raise CowpError(f"no benign situations for task(s) {', '.join(args.task)} in {args.split}")
    entries = [
        {"text": item.situation, "task": item.task, "step": item.action, "kind": item.kind}
        for item in items
    ]
    import yaml

    text = yaml.safe_dump(entries, sort_keys=False, width=100)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
        print(f"{len(entries)} benign situations ({args.split}) written to {args.out}")
    else:
        print(text, end="")
    return 0


def register(subparsers: Any) -> None:
    """Add `cowp monitor` and its subcommands."""
    parser = subparsers.add_parser(
        "monitor",
        help="measure and calibrate the Plan Monitor",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="monitor_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)

    evaluate = commands.add_parser(
        "eval", help="recall on blocking, false alarms on benign situations; --tune"
    )
    evaluate.add_argument("--split", choices=("dev", "test", "all"), default="test")
    evaluate.add_argument(
        "--variant",
        action="append",
        choices=sorted(VARIANTS),
        help="scoring variant (repeatable; default: all)",
    )
    evaluate.add_argument("--tune", action="store_true", help="write the best dev threshold")
    evaluate.add_argument(
        "--config", help="calibration file to read and --tune into (default: config/...)"
    )
    evaluate.add_argument(
        "--dataset-dir",
        help=f"COWP dataset folder with situations.json (default: ${DATASET_ENV} "
        "or ../shared/data/cowp beside the repository)",
    )
    evaluate.add_argument("--benign", help="benign situations YAML (default: the packaged set)")
    evaluate.add_argument(
        "--limit", type=int, help="at most this many items per task and label (a quick look)"
    )
    evaluate.add_argument("--plot-dir", default=".", help="where the PNG goes (default: .)")
    evaluate.add_argument("--no-plot", action="store_true", help="skip the PNG")
    evaluate.add_argument("--json", help="also write every score to this JSON file")
    evaluate.add_argument("--log-every", type=int, default=20, help="progress every N questions")
    add_llm_arguments(evaluate)
    add_model_arguments(evaluate)
    evaluate.set_defaults(func=_eval)

    benign = commands.add_parser("benign", help="write the benign set (e.g. as bench distractors)")
    benign.add_argument("--split", choices=("dev", "test", "all"), default="test")
    benign.add_argument("--task", action="append", help="only this task (repeatable)")
    benign.add_argument("--benign", help="benign situations YAML (default: the packaged set)")
    benign.add_argument("--out", help="YAML file to write (default: standard output)")
    benign.set_defaults(func=_benign)
