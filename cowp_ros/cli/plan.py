"""`cowp plan TASK`: the closed-world plan for a task, in English and in PDDL."""

from __future__ import annotations

import argparse

from cowp_ros.cli._arguments import list_tasks_in_help, positive_seconds
from cowp_ros.cli._tasks import add_adhoc_arguments, add_tasks_argument, task_from_args
from cowp_ros.planning import PLANNER_NAMES, make_planner
from cowp_ros.planning.factory import DEFAULT_PLANNER
from cowp_ros.tasks.phrases import ActionPhrases


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
    spec, loaded = task_from_args(args)
    task = spec.build_problem(args.objects, seed=args.seed, task=loaded)
    planner = make_planner(args.planner)
    result = planner.solve(task, args.timeout)
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
