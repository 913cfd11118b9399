"""`cowp judge sheet | agreement | opposites`: the judge files read again, and the dataset's
harmless sentences.

    cowp judge sheet                        # the blind sheet of the test tasks
    cowp judge agreement FILLED.yaml        # per-field agreement and the disagreements
    cowp judge opposites --out F.yaml       # each situation's normal state, as distractors

`sheet` writes every (task, situation) of the chosen tasks with what a reader needs to
judge it and the fields' definitions, never the judge files' values, to
benchmarks/annotations/second_reader/items.yaml (by default). `agreement` compares a
filled sheet with the judge files: per field the share of items that agree and Cohen's
kappa, then each disagreement, for the files' owner to resolve
(benchmarks/annotations/README.md). See cowp_ros/bench/second_reading.py. `opposites`
writes the dataset's own normal-state sentences as harmless distractors
(cowp_ros/bench/opposites.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from cowp_ros.bench.annotations import DEFAULT_DIR, load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.opposites import opposite_distractors
from cowp_ros.bench.second_reading import agreement, agreement_markdown, blind_sheet, write_sheet
from cowp_ros.errors import CowpError
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.tasks import TaskSpec, all_tasks

SHEET = DEFAULT_DIR / "second_reader" / "items.yaml"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge",
        help="a second reader's blind sheet of the benchmark's judgements, and the agreement",
        description="Write the blind item sheet for an independent second reading of the "
        "judge files, or compare a filled sheet with them (Cohen's kappa per field).",
    )
    parser.add_argument(
        "--dataset",
        default=str(default_dataset_dir()),
        help="folder holding situations.json (default: $COWP_DATASET_DIR, else "
        "../shared/data/cowp beside the repository)",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    sheet = verbs.add_parser("sheet", help="write the blind item sheet")
    sheet.add_argument(
        "--split",
        choices=("test", "dev", "all"),
        default="test",
        help="the tasks whose situations it lists (default test)",
    )
    sheet.add_argument("--out", default=str(SHEET), help=f"where to write it (default {SHEET})")
    sheet.set_defaults(func=run_sheet)
    agree = verbs.add_parser("agreement", help="compare a filled sheet with the judge files")
    agree.add_argument("sheet", help="the filled sheet")
    agree.add_argument(
        "--annotations",
        default=str(DEFAULT_DIR),
        help="folder of the judge files (default: benchmarks/annotations)",
    )
    agree.add_argument("--json", help="also write the report as JSON to this file")
    agree.set_defaults(func=run_agreement)
    opposites = verbs.add_parser(
        "opposites", help="write each situation's normal state as a harmless distractor"
    )
    opposites.add_argument(
        "--split", choices=("test", "dev", "all"), default="test", help="(default test)"
    )
    opposites.add_argument("--out", required=True, help="the distractor file to write (YAML)")
    opposites.set_defaults(func=run_opposites)


def _dataset(args: argparse.Namespace) -> SituationDataset:
    return SituationDataset.load(args.dataset)


def _specs(split: str) -> list[TaskSpec]:
    return [
        s
        for s in all_tasks().values()
        if s.dataset_id is not None and (split == "all" or s.split == split)
    ]


def run_opposites(args: argparse.Namespace) -> int:
    specs = _specs(args.split)
    found = opposite_distractors(specs, _dataset(args))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# Each situation's normal state (the dataset's situation_opposite) for the {args.split}\n"
        "# tasks, tied to its task and its commonest step: harmless by definition. Written\n"
        f"# by `cowp judge opposites --split {args.split}`; read by `cowp bench --distractors`.\n"
    )
    out.write_text(header + yaml.safe_dump(found, sort_keys=False, width=100))
    print(f"wrote {len(found)} sentences of {', '.join(s.name for s in specs)} to {out}")
    return 0


def run_sheet(args: argparse.Namespace) -> int:
    specs = _specs(args.split)
    sheet = blind_sheet(specs, _dataset(args))
    out = Path(args.out)
    write_sheet(sheet, out)
    print(f"wrote {len(sheet['items'])} items of {', '.join(s.name for s in specs)} to {out}")
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    path = Path(args.sheet)
    try:
        sheet = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise CowpError(
            f"cannot read the sheet {path}: {err}", hint="give the file `cowp judge sheet` wrote"
        ) from err
    if not isinstance(sheet, dict):
        raise CowpError(f"{path} is not a sheet", hint="give the file `cowp judge sheet` wrote")
    specs = all_tasks()
    annotations = load_annotations(Path(args.annotations))
    report = agreement(sheet, annotations, _dataset(args), specs)
    print(agreement_markdown(report), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0
