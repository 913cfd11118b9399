"""`cowp judge sheet | agreement`: a second, independent reading of the judge files.

    cowp judge sheet                        # the blind sheet of the test tasks
    cowp judge agreement FILLED.yaml        # per-field agreement and the disagreements

`sheet` writes every (task, situation) of the chosen tasks with what a reader needs to
judge it and the fields' definitions, never the judge files' values, to
benchmarks/annotations/second_reader/items.yaml (by default). `agreement` compares a
filled sheet with the judge files: per field the share of items that agree and Cohen's
kappa, then each disagreement, for the files' owner to resolve
(benchmarks/annotations/README.md). See cowp_ros/bench/second_reading.py.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from cowp_ros.bench.annotations import DEFAULT_DIR, load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.second_reading import agreement, agreement_markdown, blind_sheet, write_sheet
from cowp_ros.errors import CowpError
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.tasks import all_tasks

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


def _dataset(args: argparse.Namespace) -> SituationDataset:
    return SituationDataset.load(args.dataset)


def run_sheet(args: argparse.Namespace) -> int:
    specs = [
        s
        for s in all_tasks().values()
        if s.dataset_id is not None and (args.split == "all" or s.split == args.split)
    ]
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
