"""LLM-guided search against pyperplan's blind and heuristic search, battery domain.

For the battery-disassembly task with N objects present (the task's own 13 plus a seeded
sample of its pool; 43 is the whole shipped problem), each method plans from the
initial state and the table gives: found, plan length, nodes expanded, planning time,
and for the guided search its model calls and refused proposals.

- pyperplan's searches run in this process on the same PDDL text the planner gets, so
  expansions can be counted: every search expands a node by calling the task's
  `get_successor_states` once, and the benchmark wraps that method with a counter.
  Times are search only (parsing and grounding are reported apart).
- `llm_guided` runs `cowp_ros.methods.llm_guided` with the embedded model (or the
  server OPENAI_BASE_URL names); a node counts as expanded when its applicable actions
  are listed (one model call when there are two or more).
- `first_listed` is the same beam search with a scripted "model" that always answers
  "1, 2, 3": what the beam does without commonsense, to show what the model adds.

Every guided plan is verified (`verify_plan`); pyperplan's plans are verified the same
way. Answers are cached, so a rerun measures the search with cached answers: the first
run's times are the ones that include the model (say which you quote).

    .venv/bin/python benchmarks/bench_llm_guided.py [--objects 13,28,43] [--beams 1,3]
        [--timeout 120] [--json out.json] [--figure out.png]
    .venv/bin/python benchmarks/bench_llm_guided.py --smoke --figure /tmp/g.png    # CI
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cowp_ros.chaos.answers import SMOKE_HELP, sensible_model_server
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.llm_guided.search import make_llm_guided_planner, verify_plan
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks import get_task

PYPERPLAN_METHODS = {
    "bfs (blind)": ("bfs", None),
    "astar + hmax": ("astar", "hmax"),
    "gbf + hff": ("gbf", "hff"),
}


class SearchTimeoutError(Exception):
    """The in-process search ran past its deadline (raised from SIGALRM)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise SearchTimeoutError

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_pyperplan(task: PlanningTask, search: str, heuristic: str | None, timeout: float) -> dict:
    """One pyperplan search in-process, with its expansions counted."""
    from pyperplan import grounding
    from pyperplan.pddl.parser import Parser
    from pyperplan.planner import HEURISTICS, SEARCHES

    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="bench_llm_guided_") as tmp:
        domain_path, problem_path = task.write(tmp, check=False)
        started = time.perf_counter()
        parser = Parser(str(domain_path), str(problem_path))
        problem = parser.parse_problem(parser.parse_domain())
        grounded = grounding.ground(problem)
    ground_s = time.perf_counter() - started
    expanded = 0
    original = grounded.get_successor_states

    def counted(state: Any) -> Any:
        nonlocal expanded
        expanded += 1
        return original(state)

    grounded.get_successor_states = counted  # type: ignore[method-assign]
    started = time.perf_counter()
    solution = None
    timed_out = False
    try:
        with deadline(timeout):
            if heuristic is None:
                solution = SEARCHES[search](grounded)
            else:
                solution = SEARCHES[search](grounded, HEURISTICS[heuristic](grounded))
    except SearchTimeoutError:
        timed_out = True
    seconds = time.perf_counter() - started
    steps = [PlanStep.parse(op.name) for op in solution or []]
    problems = verify_plan(task, steps) if solution else []
    return {
        "found": solution is not None,
        "timed_out": timed_out,
        "length": len(steps),
        "expanded": expanded,
        "seconds": seconds,
        "ground_s": ground_s,
        "valid": solution is not None and not problems,
    }


def run_guided(
    task: PlanningTask, model: LanguageModel, beam: int, timeout: float, budget: int | None = None
) -> dict:
    planner = make_llm_guided_planner(model, beam=beam, max_llm_calls=budget)
    calls_before = model.usage.calls
    hits_before = model.usage.cache_hits
    result = planner.solve(task, timeout)
    problems = verify_plan(task, result.steps) if result.found else []
    return {
        "found": result.found,
        "timed_out": result.status.value == "timeout",
        "length": len(result.steps),
        "expanded": result.extra.get("expanded"),
        "seconds": result.seconds,
        "llm_calls": result.extra.get("llm_calls"),
        "server_calls": model.usage.calls - calls_before,
        "cache_hits": model.usage.cache_hits - hits_before,
        "refused": result.extra.get("refused_total"),
        "unranked_fallbacks": result.extra.get("unranked_fallbacks"),
        "backtracks": result.extra.get("backtracks"),
        "over_budget_nodes": result.extra.get("over_budget_nodes"),
        "refused_examples": result.extra.get("refused", [])[:5],
        "valid": result.found and not problems,
        "plan": [str(s) for s in result.steps],
    }


@contextlib.contextmanager
def open_model(no_llm: bool, *, cache: bool = True) -> Iterator[LanguageModel | None]:
    if no_llm:
        yield None
        return
    from cowp_ros.llm.endpoint import open_model
    from cowp_ros.llm.settings import LLMSettings

    settings = LLMSettings.resolve(timeout_s=180.0)
    with open_model(settings if cache else settings.without_cache()) as model:
        yield model


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", default="13,28,43", help="problem sizes (objects present)")
    parser.add_argument("--beams", default="1,3", help="beam widths for the guided search")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per search")
    parser.add_argument(
        "--llm-budget",
        type=int,
        default=60,
        help="model calls per guided search (then symbolic order)",
    )
    parser.add_argument("--no-llm", action="store_true", help="pyperplan and first_listed only")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--figure", type=Path, default=None, help="PNG: expansions and time")
    parser.add_argument(
        "--smoke", action="store_true", help=f"13 objects, beam 1, gbf + hff only; {SMOKE_HELP}"
    )
    args = parser.parse_args()
    methods = dict(PYPERPLAN_METHODS)
    smoke = contextlib.nullcontext()
    if args.smoke:
        args.objects, args.beams, args.timeout, args.llm_budget = "13", "1", 60.0, 5
        methods = {"gbf + hff": PYPERPLAN_METHODS["gbf + hff"]}
        smoke = sensible_model_server()
    with smoke:
        return run(args, methods)


def run(args: argparse.Namespace, methods: dict[str, tuple[str, str | None]]) -> int:
    """The benchmark proper, with `methods` of pyperplan."""
    spec = get_task("battery_disassembly")
    sizes = [int(x) for x in args.objects.split(",")]
    beams = [int(x) for x in args.beams.split(",")]
    rows: list[dict] = []

    def record(method: str, size: int, run: Callable[[], dict]) -> None:
        load = load_average()
        row = {"method": method, "objects": size, "load_before": load, **run()}
        row["load_after"] = load_average()
        rows.append(row)
        print(
            f"{size:3d} objects  {method:22s} found={row['found']!s:5s} "
            f"len={row['length']:3d} expanded={row['expanded']!s:>7s} "
            f"time={row['seconds']:8.2f}s calls={row.get('llm_calls', '-')!s:>4s} "
            f"refused={row.get('refused', '-')!s:>3s} valid={row['valid']} load={load}",
            flush=True,
        )

    with open_model(args.no_llm, cache=not args.smoke) as model:
        for size in sizes:
            task = spec.build_problem(size, seed=args.seed)
            for method, (search, heuristic) in methods.items():
                record(
                    method,
                    size,
                    lambda s=search, h=heuristic, t=task: run_pyperplan(t, s, h, args.timeout),
                )
            for beam in beams:
                scripted = ScriptedModel(completions=[(".", "1, 2, 3")], name="first_listed")
                record(
                    f"first_listed beam={beam}",
                    size,
                    lambda b=beam, m=scripted, t=task: run_guided(t, m, b, args.timeout),
                )
                if model is not None:
                    record(
                        f"llm_guided beam={beam}",
                        size,
                        lambda b=beam, t=task: run_guided(
                            t, model, b, args.timeout, args.llm_budget
                        ),
                    )
        model_name = model.name if model is not None else None
    raw = {"model": model_name, "load_end": load_average(), "rows": rows}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
    if args.figure:
        draw(rows, args.figure, model_name)
    return 0


def draw(rows: list[dict], path: Path, model_name: str | None) -> None:
    """Two panels over problem size: nodes expanded and planning time (log scales)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method and r["found"]]
        if not mine:
            continue
        sizes = [r["objects"] for r in mine]
        left.plot(sizes, [max(r["expanded"] or 0, 1) for r in mine], marker="o", label=method)
        right.plot(sizes, [max(r["seconds"], 1e-4) for r in mine], marker="o", label=method)
    for axis, title in ((left, "nodes expanded"), (right, "planning time (s)")):
        axis.set_yscale("log")
        axis.set_xlabel("objects present")
        axis.set_title(title)
        axis.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    figure.suptitle(
        f"battery_disassembly: LLM-guided search ({model_name or 'no model'}) vs pyperplan"
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
