"""Replanning time of the COWP loop without the language model, per task and planner.

For each dining task with N objects present (default 43: the task's own objects plus a
seeded sample of its pool), every dataset situation of that task is raised before the
step the data names most often. A scripted model stands in for the LLM, answering
instantly: the monitor finds exactly that step unsuitable, and the acquirer accepts
every stand-in so that, when the precondition leaves no plan, the first kind is chosen
and its action variants are added. Every planner call after the first (closed-world)
plan is one replan; the table gives their median and 95th percentile wall time,
including writing the PDDL, starting the planner process and reading its answer.

Tasks without dataset situations (serve_water) get synthetic ones: "the <object> is
broken" for each of the task's objects, raised before the first step that uses it.

    .venv/bin/python benchmarks/bench_replanning.py [--objects 43] [--per-task 8]
    .venv/bin/python benchmarks/bench_replanning.py --smoke     # CI: one situation a task
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.paper.prompts import sentence
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, PlanResult, make_planner
from cowp_ros.planning.fast_downward import is_available
from cowp_ros.tasks import TaskSpec, all_tasks
from cowp_ros.tasks.phrases import ActionPhrases

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "cowp"


@dataclass
class TimedPlanner:
    """Wraps a planner and keeps every call's result (the loop's replans)."""

    inner: Planner
    results: list[PlanResult] = field(default_factory=list)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.inner.name

    def solve(self, task: PlanningTask, timeout_s: float = 60.0) -> PlanResult:
        result = self.inner.solve(task, timeout_s)
        self.results.append(result)
        return result


@dataclass(frozen=True)
class Case:
    """One situation raised before the first step whose action is `action`."""

    situation: str
    action: str


def dataset_cases(dataset: Path, spec: TaskSpec) -> list[Case]:
    """The task's dataset situations, each at the step most people named."""
    path = dataset / "situations.json"
    if spec.dataset_id is None or not path.is_file():
        return []
    cases = []
    for record in json.loads(path.read_text()):
        if record["task_id"] != spec.dataset_id:
            continue
        action = max(record["actions"], key=lambda a: a["count"])["action"]
        cases.append(Case(record["situation"], action))
    return cases


def synthetic_cases(spec: TaskSpec, plan_actions: list[tuple[str, tuple[str, ...]]]) -> list[Case]:
    """'the <object> is broken' before the first step using each task object."""
    cases = []
    for obj in spec.task_objects:
        for action, args in plan_actions:
            if obj in args:
                cases.append(Case(f"the {obj.rsplit('_', 1)[0]} is broken", action))
                break
    return cases


def scripted_model(case: Case, blocked_step_text: str) -> ScriptedModel:
    """Blocks exactly the case's step; accepts every stand-in; picks the first one."""
    blocked = re.escape(f"to {blocked_step_text}, if {sentence(case.situation)}?")
    return ScriptedModel(yes_no=[(blocked, False)], default_yes_no=True, default_choice=0)


def run_case(
    spec: TaskSpec, task: PlanningTask, planner: Planner, case: Case, blocked_step_text: str
) -> TimedPlanner:
    timed = TimedPlanner(planner)
    model = scripted_model(case, blocked_step_text)
    loop = build_loop("cowp", spec, model, timed, problem=task)
    run_scheduled(loop, [ScheduledSituation(case.situation, at_action=case.action)])
    return timed


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--objects", type=int, default=43, help="objects present (default 43)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-task", type=int, default=None, help="situations per task")
    parser.add_argument("--planners", default="pyperplan,fast_downward")
    parser.add_argument("--tasks", default=None, help="comma-separated task names")
    parser.add_argument("--json", type=Path, default=None, help="write raw timings here")
    parser.add_argument(
        "--smoke", action="store_true", help="one situation per task, pyperplan, 12 objects"
    )
    args = parser.parse_args()
    if args.smoke:
        args.per_task, args.planners, args.objects = 1, "pyperplan", None

    planners = [p.strip() for p in args.planners.split(",") if p.strip()]
    if "fast_downward" in planners and not is_available():
        print("Fast Downward is not installed: measuring pyperplan only", file=sys.stderr)
        planners.remove("fast_downward")
    specs = list(all_tasks().values())
    if args.tasks:
        wanted = set(args.tasks.split(","))
        specs = [s for s in specs if s.name in wanted]

    timings: dict[tuple[str, str], list[float]] = defaultdict(list)
    outcomes: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    started = time.perf_counter()
    for spec in specs:
        size = args.objects
        if size is None:  # smoke: the task's own objects and a few of its pool
            size = min(len(spec.task_objects) + 4, len(spec.task_objects) + len(spec.pool()))
        task = spec.build_problem(size, seed=args.seed)
        first = make_planner("pyperplan").solve(task)
        plan_actions = [(s.action, s.args) for s in first.steps]
        cases = dataset_cases(args.dataset, spec) or synthetic_cases(spec, plan_actions)
        cases = cases[: args.per_task] if args.per_task else cases
        phrases = ActionPhrases(spec.phrases)
        step_text = {s.action: phrases.describe(s, task) for s in reversed(first.steps)}
        for planner_name in planners:
            planner = make_planner(planner_name)
            for case in cases:
                timed = run_case(spec, task, planner, case, step_text[case.action])
                replans = timed.results[1:]
                timings[(spec.name, planner_name)].extend(r.seconds for r in replans)
                for r in replans:
                    outcomes[(spec.name, planner_name)][r.status.value] += 1
            print(f"  {spec.name:<14s} {planner_name:<14s} {len(cases)} situations", flush=True)

    print()
    present = args.objects if args.objects is not None else "a few"
    print(f"Replanning time without the LLM, {present} objects present (seconds)")
    header = (
        f"{'task':<14s} {'planner':<14s} {'replans':>7s} {'median':>7s} {'p95':>7s} {'max':>7s}"
    )
    print(header + "  outcomes")
    print("-" * (len(header) + 30))
    for (task_name, planner_name), values in timings.items():
        counts = ", ".join(
            f"{k} {v}" for k, v in sorted(outcomes[(task_name, planner_name)].items())
        )
        if not values:
            print(f"{task_name:<14s} {planner_name:<14s} {0:>7d}")
            continue
        print(
            f"{task_name:<14s} {planner_name:<14s} {len(values):>7d} "
            f"{statistics.median(values):>7.3f} {percentile(values, 95):>7.3f} "
            f"{max(values):>7.3f}  {counts}"
        )
    for planner_name in planners:
        values = [v for (_, p), vs in timings.items() if p == planner_name for v in vs]
        if values:
            print(
                f"{'ALL':<14s} {planner_name:<14s} {len(values):>7d} "
                f"{statistics.median(values):>7.3f} {percentile(values, 95):>7.3f} "
                f"{max(values):>7.3f}"
            )
    print(f"\nwall time of the benchmark: {time.perf_counter() - started:.0f} s")
    if args.json:
        raw = {f"{t}/{p}": v for (t, p), v in timings.items()}
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
