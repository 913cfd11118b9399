"""Which task a command runs: a registered one (shipped, or added with `--tasks FILE`),
or `--domain D --problem P` with no registry entry; and checks of what the command
line says about it, made before any model starts."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cowp_ros.errors import CowpError
from cowp_ros.resources import TASKS_ENV

if TYPE_CHECKING:  # the loop's modules cost `cowp plan` 60 ms to import, for a type;
    # the registry and the pddl library are imported once `cowp plan` has started its
    # planner on the files (`plan.py`), so that they import while it plans
    from cowp_ros.cowp.schedule import ScheduledSituation
    from cowp_ros.pddl import PlanningTask
    from cowp_ros.tasks import TaskSpec


def add_tasks_argument(parser: argparse.ArgumentParser) -> None:
    """`--tasks FILE` (repeatable): task registries added to the shipped one."""
    parser.add_argument(
        "--tasks",
        action="append",
        default=[],
        metavar="FILE",
        help=f"a tasks.yaml of your own (or a folder holding one) whose tasks join the "
        f"shipped ones; repeatable; also ${TASKS_ENV} (files or folders, ':'-separated)",
    )


def add_adhoc_arguments(parser: argparse.ArgumentParser) -> None:
    """`--domain D --problem P [--description TEXT]`: a task with no registry entry."""
    group = parser.add_argument_group("a task with no registry entry")
    group.add_argument("--domain", default=None, metavar="FILE", help="a PDDL domain file")
    group.add_argument("--problem", default=None, metavar="FILE", help="its PDDL problem file")
    group.add_argument(
        "--description",
        default=None,
        metavar="TEXT",
        help='the task in words, for the model ("watering the plant"); default: the domain\'s name',
    )


def apply_tasks(args: argparse.Namespace) -> None:
    """Add the `--tasks` registries (checked) for this process and the nodes it starts."""
    from cowp_ros.tasks.sources import add_task_files

    add_task_files(getattr(args, "tasks", None) or [])


def task_from_args(
    args: argparse.Namespace, texts: tuple[str, str] | None = None
) -> tuple[TaskSpec, PlanningTask]:
    """The task the command line names, with its PDDL read (a missing or broken file is
    said now, before a model or a node starts). `texts`: the text of `--domain` and
    `--problem`, read already."""
    from cowp_ros.tasks import get_task
    from cowp_ros.tasks.adhoc import adhoc_task

    apply_tasks(args)
    domain, problem = getattr(args, "domain", None), getattr(args, "problem", None)
    if domain or problem:
        if args.task:
            raise CowpError(
                f"give a task name ({args.task}) or --domain/--problem, not both",
                hint="--domain D --problem P runs a task that has no registry entry",
            )
        if not (domain and problem):
            raise CowpError("--domain and --problem go together", hint="give both files")
        return adhoc_task(domain, problem, getattr(args, "description", None), texts)
    if not args.task:
        raise CowpError(
            "no task given",
            hint="name a task (cowp plan --help lists them), or give --domain D --problem P",
        )
    spec = get_task(args.task)
    return spec, spec.load()


def check_schedule(
    schedule: Sequence[ScheduledSituation], task: PlanningTask, plan_length: int | None
) -> None:
    """Refuse an `--at` that cannot come: an action the domain does not have, or a step
    beyond the closed-world plan (`plan_length`, when known)."""
    from cowp_ros.pddl.edits import base_action_name

    actions = sorted(task.actions)
    for scheduled in schedule:
        if scheduled.at_action is not None:
            if base_action_name(scheduled.at_action) not in actions:
                raise CowpError(
                    f"--at {scheduled.at_action}: the domain has no such action",
                    hint=f"a step number, or one of: {', '.join(actions)}",
                )
        elif (
            scheduled.at_step is not None
            and plan_length is not None
            and scheduled.at_step > plan_length
        ):
            raise CowpError(
                f"--at {scheduled.at_step}: the closed-world plan has {plan_length} steps",
                hint=f"give a step from 1 to {plan_length}, or an action name",
            )
