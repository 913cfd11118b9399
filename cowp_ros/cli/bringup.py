"""`cowp bringup --profile P`: start a profile's nodes as processes and supervise them."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path

from cowp_ros.bringup.doctor import check_profile
from cowp_ros.bringup.spec import Profile, load_profile, with_parameter_overrides
from cowp_ros.bringup.supervisor import Supervisor
from cowp_ros.cli._tasks import add_tasks_argument, apply_tasks
from cowp_ros.errors import CowpError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bringup",
        help="start the nodes of a profile (sim, robot, gazebo, replay) and supervise them",
        description="Start each node of the profile as its own process, wait until each "
        "serves, then watch them until Ctrl-C (forwarded to every node) or until one dies "
        "(reported with its log, and the others are shut down).",
    )
    parser.add_argument("--profile", default="sim", help="profile in the node spec (default sim)")
    parser.add_argument("--spec", type=Path, help="node spec YAML (default config/bringup.yaml)")
    parser.add_argument(
        "--log-dir", type=Path, default=Path("build/bringup-logs"), help="one log file per node"
    )
    parser.add_argument(
        "--ready-timeout", type=float, default=90.0, help="seconds to wait for every node"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NODE.PARAM=VALUE",
        help="override a node parameter (YAML value), e.g. sim_world.scenario=NAME",
    )
    parser.add_argument(
        "--task",
        metavar="NAME",
        help="sim profiles: the world of this task's problem (its objects where the "
        "executor would find them), when no sim_world.scenario is set",
    )
    add_tasks_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    apply_tasks(args)  # the nodes inherit COWP_TASKS: they know your tasks too
    profile = load_profile(args.profile, args.spec)
    profile = with_parameter_overrides(profile, [*_task_world_override(args, profile), *args.set])
    check_profile(profile)  # refuse before starting anything, naming what is missing
    print(f"profile '{profile.name}': {profile.description}")
    for spec in profile.nodes:
        if spec.external:
            print(f"  expects {spec.name} ({spec.package}) to be running already")
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    start = time.monotonic()
    supervisor = Supervisor(profile, args.log_dir)
    supervisor.start()
    try:
        supervisor.wait_ready(args.ready_timeout)
        print(f"all nodes ready in {time.monotonic() - start:.1f} s; Ctrl-C to stop")
        dead = supervisor.watch(stop.is_set)
        if dead is not None:
            print(dead.describe())
            return 1
        return 0
    finally:
        codes = supervisor.stop()
        print("stopped: " + ", ".join(f"{name} ({code})" for name, code in codes.items()))


def _task_world_override(args: argparse.Namespace, profile: Profile) -> list[str]:
    """`sim_world.scenario=FILE`: the world of `--task`'s problem, written beside the
    logs, unless the profile has no sim_world or `--set` names its scenario."""
    if not args.task:
        return []
    if not any(node.name == "sim_world" for node in profile.nodes):
        raise CowpError(
            f"--task {args.task}: profile '{profile.name}' has no sim_world to build a world",
            hint="the robot's world is what it has: set task_manager.present_objects instead",
        )
    if any(item.startswith("sim_world.scenario=") for item in args.set):
        return []
    from cowp_ros.cli._task_world import write_task_world  # the skill layer, only here

    path = write_task_world(args.task, args.log_dir)
    print(f"sim_world: the world of {args.task}'s problem, with no events ({path})")
    return [f"sim_world.scenario={path}"]
