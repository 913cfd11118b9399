"""`cowp bench`: COWP against its baselines on the public situation dataset.

    cowp bench                                   # defaults: all methods, 3 trials a task
    cowp bench --trials 20 --out build/bench     # more (a rerun resumes and extends)
    cowp bench --methods oracle,cw --trials 150 --protocol conference   # no model needed
    cowp bench --llm-url http://host:8000/v1 --llm-model Qwen2.5-72B-Instruct --jobs 8
    cowp bench --report-only --out benchmarks/results/<run>   # the table from kept evidence
    cowp bench --pairs                           # which situations even the oracle cannot solve

Writes `<out>/results.json`, `<out>/results.md` and plots (`overall.png`,
`per_task.png`, `per_object.png`); each finished trial is kept under `<out>/trials/`
(`--archive` packs them into `<out>/trials.tar.xz` with `<out>/provenance.json`: the
command, the commit and the run time).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from cowp_ros.bench import methods as method_registry
from cowp_ros.bench.annotations import DEFAULT_DIR, load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.results import CONTROLS, aggregate, markdown, plot
from cowp_ros.bench.runner import (
    ARCHIVE,
    BENCH_VERSION,
    PROTOCOLS,
    BenchSettings,
    Distractor,
    Progress,
    check_config,
    load_records,
    run_trials,
    saved_version,
    write_archive,
)
from cowp_ros.bench.seeds import REGISTRY, check_test_run, developed, register_seed
from cowp_ros.cli.llm import add_llm_arguments, add_model_arguments, settings_from_args
from cowp_ros.errors import CowpError
from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.endpoint import RunningServer, describe_server, llm_endpoint
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.planning import Planner, make_planner
from cowp_ros.tasks import TaskSpec, all_tasks, split_tasks

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATASET = default_dataset_dir()
DEFAULT_METHODS = (
    "oracle,retry,same_kind,noun_only,cw,grounded,cowp,ek,lmzsp,progprompt,inner_monologue"
)
BENCH_LLM_TIMEOUT_S = 600.0
"""Per request, unless --llm-timeout says otherwise: ProgPrompt's program is a long
answer, and a small CPU shared with other work can take minutes for it; a timeout would
score the method as failed for the machine's sake."""


def _embedded_name(args: argparse.Namespace) -> str:
    """The name of the model the embedded server will load (without starting it)."""
    from cowp_ros.llm.model_store import resolve_model

    try:
        return resolve_model(args.model_path, args.model).name
    except CowpError:  # not provisioned: the run will say so when it starts the server
        return args.model_path or args.model or "default"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="benchmark COWP against its baselines on the situation dataset",
        description="Run COWP and the baselines (the oracle ceiling, CW, EK, LMZSP, "
        "ProgPrompt, Inner Monologue) on the dataset tasks in a symbolic simulator; report "
        "task completion, handling of blocking situations, harmless situations that changed "
        "a trial, and LLM usage, with 95 %% intervals, test tasks apart. Resumable: finished "
        "trials are kept in --out.",
    )
    parser.add_argument(
        "--dataset",
        default=str(DEFAULT_DATASET),
        help="folder holding situations.json (default: $COWP_DATASET_DIR, else ../shared/data/cowp "
        "beside the repository)",
    )
    parser.add_argument(
        "--methods",
        default=DEFAULT_METHODS,
        help=f"comma-separated method names (default: {DEFAULT_METHODS})",
    )
    parser.add_argument("--list-methods", action="store_true", help="list methods and exit")
    parser.add_argument(
        "--tasks", default="", help="comma-separated tasks (default: every dataset task)"
    )
    parser.add_argument(
        "--split",
        choices=("all", "dev", "test"),
        default="all",
        help="only the dev or the test tasks (pddl/tasks.yaml split; default all)",
    )
    parser.add_argument("--trials", type=int, default=3, help="trials per task (default 3)")
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="journal",
        help="journal: each step raises a situation with chance --p, drawn by crowd count; "
        "conference: exactly one situation per trial (default journal)",
    )
    parser.add_argument(
        "--p",
        type=float,
        default=0.1,
        help="journal protocol: chance of a situation at each step (default 0.1)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="trials run at once against the model server (results are those of --jobs 1)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the trial draws (default 0)")
    parser.add_argument("--out", default="build/bench", help="output folder (default build/bench)")
    parser.add_argument(
        "--annotations",
        default=str(DEFAULT_DIR),
        help="folder of <task>.yaml judge files (default: benchmarks/annotations)",
    )
    parser.add_argument(
        "--distractors",
        help="file of benign sentences raised as situations that should change nothing: "
        "one a line, or a JSON/YAML list whose items may name their task and step (as "
        "`cowp monitor benign` writes them); several files, comma-separated, are reported "
        "apart (e.g. the project's own and ../shared/data/distractors/test_near_miss.yaml)",
    )
    parser.add_argument(
        "--distractor-p",
        type=float,
        default=0.1,
        help="chance of a distractor at each step when --distractors is given (default 0.1)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="delete the trials already in --out first"
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="only rebuild the table and plots (from <out>/trials/, else <out>/trials.tar.xz)",
    )
    parser.add_argument(
        "--archive",
        action="store_true",
        help="pack the trial records into <out>/trials.tar.xz and write <out>/provenance.json",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="run the oracle on every (task, situation, step) pair with the whole house "
        "present, list the unsolvable ones and check them against the judge files",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="sample the LLM methods' answers at this temperature (0 < T <= 2), each trial "
        "with its own seed kept in its record, so repeated trials are samples (default 0: "
        "greedy answers)",
    )
    parser.add_argument(
        "--sample-seed",
        type=int,
        default=None,
        help="with --temperature: the seed the trials' sampling seeds are drawn from (default 0)",
    )
    parser.add_argument(
        "--new-test-seed",
        action="store_true",
        help="draw a fresh random seed for scoring --methods on the test tasks, record it in "
        "benchmarks/seeds.yaml with the methods' code version, print it and exit (the test "
        "tasks are scored only on a seed recorded before the run; docs/benchmark.md)",
    )
    parser.add_argument(
        "--note", default="", help="with --new-test-seed: what the seed is for (recorded)"
    )
    parser.add_argument(
        "--seeds",
        default=str(REGISTRY),
        help="the registry of seeds the test tasks were scored on (default: benchmarks/seeds.yaml)",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="score the test tasks on a seed already used for another version of the "
        "methods (the table then says re-run, never fresh)",
    )
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--planner", default="pyperplan", help="planner (default pyperplan)")
    add_llm_arguments(parser)
    add_model_arguments(parser)
    parser.set_defaults(func=run_bench)


def read_distractor_files(paths: str) -> tuple[Distractor, ...]:
    """`--distractors A,B`: one file as before; several, each sentence tagged with its
    file's name (`Distractor.source`) so the results give each file's figure apart."""
    files = [p.strip() for p in paths.split(",") if p.strip()]
    if len(files) == 1:
        return read_distractors(files[0])
    names = [Path(f).stem for f in files]
    if len(set(names)) < len(names):
        raise CowpError(
            f"--distractors names two files of the same name: {', '.join(files)}",
            hint="each file's figure is reported under its name: rename one",
        )
    return tuple(
        replace(d, source=name)
        for file, name in zip(files, names, strict=True)
        for d in read_distractors(file)
    )


def read_distractors(path: str) -> tuple[Distractor, ...]:
    """Sentences from a text file (one a line, # comments) or a JSON / YAML list.

    A list item may be a sentence or a mapping with `text` and optional `task` and
    `step` (what `cowp monitor benign` writes): a tied sentence is raised only in its
    task, at its step when the plan has it.
    """
    file = Path(path)
    if not file.is_file():
        raise CowpError(f"no distractor file {file}")
    text = file.read_text()
    found: list[Distractor] = []
    if file.suffix in (".json", ".yaml", ".yml"):
        import yaml

        try:
            raw = yaml.safe_load(text) or []
        except yaml.YAMLError as err:
            raise CowpError(f"the distractor file {file} is not valid YAML/JSON: {err}") from err
        if not isinstance(raw, list):
            raise CowpError(f"the distractor file {file} must hold a list of sentences")
        for item in raw:
            if isinstance(item, dict):
                if not str(item.get("text", "")).strip():
                    raise CowpError(f"an entry of {file} has no text: {item}")
                found.append(
                    Distractor(
                        str(item["text"]).strip(),
                        str(item.get("task") or ""),
                        str(item.get("step") or ""),
                    )
                )
            elif str(item).strip():
                found.append(Distractor(str(item).strip()))
    else:
        found = [
            Distractor(line.strip())
            for line in text.splitlines()
            if line.strip() and not line.startswith("#")
        ]
    if not found:
        raise CowpError(f"the distractor file {file} holds no sentence")
    return tuple(found)


def _tasks(args: argparse.Namespace, dataset: SituationDataset) -> list[TaskSpec]:
    ids = set(dataset.task_ids())
    specs = [s for s in all_tasks().values() if s.dataset_id in ids]
    if args.tasks:
        wanted = [t.strip() for t in args.tasks.split(",") if t.strip()]
        from cowp_ros.tasks import get_task

        specs = [get_task(t) for t in wanted]
        missing = [s.name for s in specs if s.dataset_id not in ids]
        if missing:
            raise CowpError(f"no dataset situations for task(s): {', '.join(missing)}")
    if args.split != "all":
        if args.tasks:
            raise CowpError("give --tasks or --split, not both")
        specs = [s for s in specs if s.split == args.split]
    return specs


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def run_bench(args: argparse.Namespace) -> int:
    if args.list_methods:
        for name, cls in method_registry.discover().items():
            print(f"{name:18s} {cls.label:18s} {'LLM' if cls.uses_llm else '   '}  {cls.summary}")
        for name, error in method_registry.BROKEN.items():
            print(f"{name:18s} {'(broken)':18s}       cannot be imported: {error}")
        return 0
    if args.new_test_seed:
        return _new_test_seed(args)
    if args.trials < 1:
        raise CowpError("--trials must be at least 1")
    if args.jobs < 1:
        raise CowpError("--jobs must be at least 1")
    if not 0.0 <= args.p <= 1.0 or not 0.0 <= args.distractor_p <= 1.0:
        raise CowpError("--p and --distractor-p are probabilities: give values in 0..1")
    if args.sample_seed is not None and not args.temperature:
        raise CowpError(
            "--sample-seed needs --temperature: answers are greedy without it",
            hint="add --temperature 0.7 (for example) to sample",
        )
    dataset = SituationDataset.load(args.dataset)
    specs = _tasks(args, dataset)
    annotations = load_annotations(Path(args.annotations))
    for spec in specs:
        if spec.name not in annotations:
            raise CowpError(
                f"no judge file for task {spec.name} in {args.annotations}",
                hint="write <task>.yaml (see benchmarks/annotations/README.md)",
            )
        annotations[spec.name].check_covers(dataset.for_task(spec.dataset_id or 0), spec)
    if args.pairs:
        return _pairs(specs, dataset, annotations, make_planner(args.planner))
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    method_registry.select(names)  # an unknown name is the first thing to say
    scores_test = any(s.split == "test" for s in specs)
    standing = ""
    if scores_test and not args.report_only:
        standing = check_test_run(args.seed, names, rerun=args.rerun, path=Path(args.seeds))
        missing = [c for c in CONTROLS if c not in names] if developed(names) else []
        if missing:
            _say(f"the test tasks are scored beside every control: adding {', '.join(missing)}")
            names += missing
    methods = method_registry.select(names)
    out = Path(args.out)
    distractors = read_distractor_files(args.distractors) if args.distractors else ()
    if args.llm_timeout is None:
        args.llm_timeout = BENCH_LLM_TIMEOUT_S
    settings = settings_from_args(args)
    needs_llm = any(m.uses_llm for m in methods)
    model_label = (settings.model or settings.shown_url) if settings.configured else ""
    if needs_llm and not model_label:
        model_label = f"embedded:{_embedded_name(args)}"
    bench_settings = BenchSettings(
        dataset=str(Path(args.dataset).resolve()),
        p=args.p,
        seed=args.seed,
        protocol=args.protocol,
        distractor_p=args.distractor_p if distractors else 0.0,
        distractors=distractors,
        model=model_label,
        temperature=args.temperature,
        sample_seed=args.sample_seed or 0,
        seed_standing=standing,
    )
    version = BENCH_VERSION
    if args.report_only:
        version = _check_saved_config(out, bench_settings)
        saved = json.loads((out / "config.json").read_text())
        bench_settings = replace(bench_settings, seed_standing=saved.get("seed_standing", ""))
    else:
        if args.fresh and out.exists():
            shutil.rmtree(out / "trials", ignore_errors=True)
            (out / "config.json").unlink(missing_ok=True)
        check_config(out, bench_settings)
    started = time.monotonic()
    checkout = _checkout() if args.archive else {}
    _say(f"load before: {_load()}")
    ran = 0
    if not args.report_only:
        total = len(specs) * args.trials * len(methods)
        progress = Progress(total)
        planner = make_planner(args.planner)
        with contextlib.ExitStack() as stack:
            lock = threading.Lock()
            started_endpoint: list = []

            def factory() -> LanguageModel | None:
                """One client per worker over the one server (started once, when needed)."""
                if not needs_llm:
                    return None
                with lock:
                    if not started_endpoint:
                        endpoint = llm_endpoint(
                            settings,
                            model_path=args.model_path,
                            model_name=args.model,
                            on_start=_started,
                        )
                        started_endpoint.append(stack.enter_context(endpoint))
                return OpenAICompatibleModel(started_endpoint[0])

            ran = run_trials(
                out,
                specs,
                methods,
                args.trials,
                bench_settings,
                dataset,
                annotations,
                planner,
                factory,
                progress=progress,
                jobs=args.jobs,
            )
        progress.close()
    run_seconds = time.monotonic() - started
    if not args.report_only:
        _say(f"ran {ran} (method, trial) pair(s) in {run_seconds:.0f} s with --jobs {args.jobs}")
    names = [m.name for m in methods]
    records = load_records(out, names, [s.name for s in specs], args.trials)
    if not records:
        raise CowpError(
            f"no trial records in {out} for this selection",
            hint=f"run without --report-only first, or point --out at a folder holding "
            f"trials/ or {ARCHIVE}",
        )
    labels = {m.name: m.label for m in methods}
    result = aggregate(records, names, labels, split_tasks())
    result["bench_version"] = version
    result["settings"] = bench_settings.to_dict() | {
        "trials_per_task": args.trials,
        "tasks": [s.name for s in specs],
        "methods": names,
        "objects_present": sorted({r["objects_present"] for r in records}),
        "load_after": _load(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
    protocol = (
        f"journal protocol (p={args.p})" if args.protocol == "journal" else "conference protocol"
    )
    header = (
        f"# cowp bench v{version}: {args.trials} trial(s) a task x {len(specs)} task(s), "
        f"{protocol}, "
        f"seed={args.seed}{_standing(bench_settings.seed_standing)}, "
        f"{'/'.join(map(str, result['settings']['objects_present']))} "
        f"objects present, model={bench_settings.model or 'none'}"
    )
    if bench_settings.temperature:
        header += (
            f", sampled answers (temperature {bench_settings.temperature:g}, sample seed "
            f"{bench_settings.sample_seed})"
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=1) + "\n")
    table = markdown(result, header)
    (out / "results.md").write_text(table)
    if not args.no_plots:
        title = header.removeprefix("# ")
        for path in plot(result, out, title):
            _say(f"plot: {path}")
    if args.archive and not args.report_only:
        _say(f"archive: {write_archive(out)}")
        _write_provenance(out, checkout, run_seconds, ran, args.jobs)
    print(table)
    _say(f"results: {out / 'results.json'}, {out / 'results.md'}; load after: {_load()}")
    return 0


def _standing(standing: str) -> str:
    """What the header says of the seed: fresh (recorded before the run for this code),
    a re-run on a used seed, or nothing (references only, or the dev tasks)."""
    if standing == "fresh":
        return " (fresh: recorded in benchmarks/seeds.yaml before the run)"
    if standing == "re-run":
        return " (re-run on a seed used before: not fresh)"
    return ""


def _new_test_seed(args: argparse.Namespace) -> int:
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    method_registry.select(names)  # unknown names are refused before anything is written
    if not developed(names):
        raise CowpError(
            "the controls, the oracle and CW are references: any seed scores them",
            hint="name the methods under test in --methods",
        )
    registry = Path(args.seeds)
    commit = _git("rev-parse", "--short", "HEAD").strip()
    entry = register_seed(names, commit, args.note, path=registry)
    print(entry.seed)
    _say(
        f"recorded seed {entry.seed} for {', '.join(names)} (code {entry.code}) in "
        f"{registry}: commit it, then run the test tasks with --seed {entry.seed}"
    )
    return 0


def _check_saved_config(out: Path, settings: BenchSettings) -> int:
    """--report-only: the folder's trials must be of these settings (never mixed).

    Returns the bench version they were run with: an older version's trials are
    reported (a note says this code would not reproduce them), never rerun."""
    path = out / "config.json"
    if not path.is_file():
        raise CowpError(
            f"no config.json in {out}", hint="point --out at a folder a bench run wrote"
        )
    saved = json.loads(path.read_text())
    wanted = settings.to_dict()
    version = saved_version(saved)
    skip = ("dataset", "bench_version", "seed_standing")
    differ = sorted(k for k in {*wanted, *saved} if saved.get(k) != wanted.get(k) and k not in skip)
    if differ:
        raise CowpError(
            f"{out} holds trials run with other settings ({', '.join(differ)})",
            hint="give the options the run was made with (see its provenance.json)",
        )
    if version != BENCH_VERSION:
        _say(
            f"note: {out} holds bench v{version} trials; this code runs bench v{BENCH_VERSION} "
            "and would not reproduce them (its world and judge changed): reporting them as kept"
        )
    return version


def _git(*cmd: str) -> str:
    try:
        done = subprocess.run(
            ["git", *cmd], cwd=REPO, capture_output=True, text=True, timeout=20, check=False
        )
        return done.stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _checkout() -> dict[str, Any]:
    """The commit and the tracked files that differ from it (a reader can see whether
    any of them is code the run used), taken when the run starts: its code is loaded then.
    """
    return {
        "commit": _git("rev-parse", "HEAD").strip(),
        "uncommitted": sorted(
            line[3:] for line in _git("status", "--porcelain", "--untracked-files=no").splitlines()
        ),
    }


def _write_provenance(
    out: Path, checkout: dict[str, Any], seconds: float, ran: int, jobs: int
) -> None:
    """The command, the commit and the time of the run beside its archive."""
    record = {
        "command": "cowp " + shlex.join(sys.argv[1:]) if sys.argv else "",
        **checkout,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "run_seconds": round(seconds, 1),
        "pairs_run": ran,
        "jobs": jobs,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {_load()}",
    }
    (out / "provenance.json").write_text(json.dumps(record, indent=1) + "\n")


def _pairs(
    specs: list[TaskSpec], dataset: SituationDataset, annotations: dict, planner: Planner
) -> int:
    """`--pairs`: the oracle on every (task, situation, step) pair; disagreements fail."""
    from cowp_ros.bench.solvability import disagreements, pairs

    started = time.monotonic()
    found = []
    for spec in specs:
        rows = pairs(spec, dataset, annotations[spec.name], planner)
        found.extend(rows)
        blocking = [r for r in rows if r.blocking]
        solved = sum(r.solved for r in blocking)
        print(f"{spec.name}: {len(rows)} pairs, {len(blocking)} blocking, {solved} solved")
        for row in rows:
            if row.blocking and not row.solved:
                print(f"  unsolvable: {row.line()}")
    wrong = disagreements(found)
    for row in wrong:
        print(f"DISAGREES with the judge file: {row.line()}")
    print(f"{len(found)} pairs in {time.monotonic() - started:.0f} s; {len(wrong)} disagreement(s)")
    return 1 if wrong else 0


def _started(server: RunningServer) -> None:
    _say("\n" + describe_server(server))
