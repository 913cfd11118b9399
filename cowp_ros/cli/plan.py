"""`cowp plan TASK`: the closed-world plan for a task, in English and in PDDL."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

from cowp_ros.cli._arguments import list_tasks_in_help, positive_seconds
from cowp_ros.cli._tasks import add_adhoc_arguments, add_tasks_argument, task_from_args
from cowp_ros.errors import CowpError
from cowp_ros.limits import MAX_PDDL_BYTES, read_regular_file
from cowp_ros.planning import PLANNER_NAMES, Planner, make_planner
from cowp_ros.planning.factory import DEFAULT_PLANNER
from cowp_ros.planning.fast_downward import FastDownwardPlanner, StartedPlan


def add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `plan` and `run`: which planner, how many objects present."""
    parser.add_argument(
        "--planner",
        default=DEFAULT_PLANNER,
        help=f"planner: {', '.join(PLANNER_NAMES)} (alias fd: LAMA-first); default "
        f"{DEFAULT_PLANNER}: Fast Downward's eager search where it is installed, else pyperplan",
    )
    parser.add_argument(
        "--objects",
        type=int,
        default=None,
        metavar="N",
        help="objects present: the task's own plus a random sample of the pool "
        "(default: the whole problem file)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for the pool sample (default 0)")
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=60.0,
        metavar="S",
        help="planner deadline in seconds (default 60)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="make the closed-world plan for a task",
        description="Make the closed-world plan for a task and print it.",
    )
    list_tasks_in_help(parser)
    parser.add_argument("task", nargs="?", help="task name, alias or dataset id (e.g. fill_cup, 4)")
    add_tasks_argument(parser)
    add_adhoc_arguments(parser)
    add_problem_arguments(parser)
    parser.set_defaults(func=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    planner = make_planner(args.planner)
    early = start_on_files(args, planner)
    try:
        spec, loaded = task_from_args(args, early.texts if early else None)
        task = spec.build_problem(args.objects, seed=args.seed, task=loaded)
        if early is not None:
            result = early.planner.solve(task, args.timeout, started=early.plan)
        else:
            result = planner.solve(task, args.timeout)
    finally:
        if early is not None:
            early.plan.stop()  # a refusal or an interrupt leaves nothing running
    from cowp_ros.tasks.phrases import ActionPhrases

    phrases = ActionPhrases(spec.phrases)
    print(f"task: {spec.name} ({spec.description}); {len(task.objects)} objects present")
    if not result.found:
        print(f"no plan ({result.status.value}): {result.detail}")
        return 1
    cost = f", cost {result.extra['cost']}" if "cost" in result.extra else ""
    print(f"plan by {result.planner} in {result.seconds:.2f} s ({len(result.steps)} steps{cost}):")
    for number, step in enumerate(result.steps, 1):
        print(f"  {number:2d}. {phrases.describe(step, task):<50s} {step}")
    return 0


class EarlyPlan(NamedTuple):
    """Fast Downward started on the text of `--domain` and `--problem`."""

    planner: FastDownwardPlanner
    texts: tuple[str, str]
    plan: StartedPlan


def start_on_files(args: argparse.Namespace, planner: Planner) -> EarlyPlan | None:
    """`--domain D --problem P` planned as written: Fast Downward starts on the files'
    text before the project's modules and the `pddl` library are imported and the task
    parsed and checked (about 0.1 s that the planner no longer waits for, on the other
    core), and `solve` takes its answer, or refuses as it always does. None where the
    planner is not Fast Downward, the task is a registry's (planned as the library
    writes it back, as every replan is) or `--objects` plans a part of the problem; and
    where a file cannot be read, which the parse then says in words."""
    if not isinstance(planner, FastDownwardPlanner) or args.objects is not None or args.task:
        return None
    if not (args.domain and args.problem):
        return None
    try:
        domain_text, problem_text = (
            read_regular_file(Path(name).expanduser(), MAX_PDDL_BYTES, "PDDL file").decode("utf-8")
            for name in (args.domain, args.problem)
        )
    except (OSError, ValueError, CowpError):
        return None
    return EarlyPlan(
        planner,
        (domain_text, problem_text),
        planner.start_on_text(domain_text, problem_text, args.timeout),
    )
