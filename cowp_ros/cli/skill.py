"""`cowp skill NAME ...`: one skill alone, first as a dry run, then on the robot.

Before a whole task runs on a new robot, each skill should be tried by itself: does the
base drive to the calibrated pose, does the arm reach each named pose, does a grasp
register. NAME is a skill with its roles (`pick object=cup_1`) or a PDDL action with its
arguments (`grasp_cup cup_1`), resolved exactly as the executor resolves a plan step.

By default nothing moves: the skill runs through the real skill map and runner on
backends that print what they would command (location poses, joint values, gripper
commands). `--run` sends the same step to the executor's ExecuteSkill action
(`/cowp/execute_skill`), prints its feedback and result, and cancels it on Ctrl-C.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from cowp_ros.cli._tasks import add_tasks_argument, apply_tasks
from cowp_ros.errors import CowpError
from cowp_ros.resources import share_path
from cowp_ros.ros.names import EXECUTE_SKILL_ACTION
from cowp_ros.skills.config import RobotConfig, load_robot_config
from cowp_ros.skills.dry_run import DryRunLog, dry_run_backends
from cowp_ros.skills.roles import with_tasks
from cowp_ros.skills.runner import SkillRunner, arm_geometry
from cowp_ros.skills.skill_map import SkillMap, load_skill_map
from cowp_ros.skills.world import Whereabouts
from cowp_ros.tasks import all_tasks


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "skill",
        help="dry-run one skill alone (what the robot would do), or --run it on the robot",
        description="Resolve one skill (NAME ROLE=VALUE ...) or PDDL action (NAME ARG ...) "
        "as the executor does and print every command it would send: base poses, arm "
        "joint values, gripper commands. Nothing moves unless --run is given; then the "
        "step goes to the running executor, and Ctrl-C cancels it.",
    )
    parser.add_argument("name", nargs="?", help="skill (pick, navigate, ...) or PDDL action")
    parser.add_argument(
        "arguments", nargs="*", help="ROLE=VALUE for a skill, object names for an action"
    )
    parser.add_argument("--list", action="store_true", help="list the skills and their roles")
    parser.add_argument(
        "--run", action="store_true", help="execute it through the executor (the robot moves)"
    )
    parser.add_argument(
        "--at", metavar="LOCATION", help="dry run: the base is already at this named location"
    )
    parser.add_argument(
        "--verify-detections",
        action="store_true",
        help="dry run: include the find skills' wait for a detection",
    )
    parser.add_argument("--robot-config", type=Path, help="robot contract (config/robot.yaml)")
    parser.add_argument("--skills-config", type=Path, help="skill map (config/skills.yaml)")
    parser.add_argument(
        "--action",
        default=EXECUTE_SKILL_ACTION,
        help=f"--run: the executor's ExecuteSkill action (default {EXECUTE_SKILL_ACTION})",
    )
    parser.add_argument(
        "--server-timeout", type=float, default=10.0, help="--run: seconds to find the executor"
    )
    parser.add_argument(
        "--step-timeout",
        type=float,
        default=600.0,
        help="--run: seconds the step may take before it is canceled",
    )
    add_tasks_argument(parser)  # your own tasks' actions and skills, as the executor knows them
    parser.set_defaults(func=run)


def load(args: argparse.Namespace) -> tuple[RobotConfig, SkillMap, Path, Path]:
    robot_path = args.robot_config or share_path("config", "robot.yaml")
    skills_path = args.skills_config or share_path("config", "skills.yaml")
    robot = load_robot_config(Path(robot_path))
    skills = with_tasks(
        load_skill_map(Path(skills_path), arm_poses=set(robot.arm.poses)), all_tasks().values()
    )  # the registered tasks' parameter names, as the executor knows them
    return robot, skills, Path(robot_path), Path(skills_path)


def list_skills(skills: SkillMap) -> None:
    for name, skill in skills.skills.items():
        roles = " ".join(f"{role}=..." for role in sorted(skill.roles))
        steps = ", ".join(f"{p.kind} {p.value}" for p in skill.steps)
        print(f"{name} {roles}".rstrip())
        print(f"    {skill.description}: {steps}")
    print(f"\nPDDL actions ({len(skills.actions)}): {', '.join(sorted(skills.actions))}")


def dry_run(args: argparse.Namespace) -> int:
    robot, skills, robot_path, skills_path = load(args)
    call = skills.resolve(args.name, args.arguments)  # a mistake is a CowpError here
    world = Whereabouts(
        set(robot.base.locations),
        location_aliases=skills.location_aliases,
        object_locations=skills.object_locations,
        sources=(skills_path, robot_path),
    )
    if args.at:
        if args.at not in robot.base.locations:
            raise CowpError(
                f"--at {args.at}: not a named location",
                hint=f"robot.yaml base.locations: {', '.join(sorted(robot.base.locations))}",
            )
        world.base_location = args.at
    log = DryRunLog()
    runner = SkillRunner(
        skills,
        world,
        dry_run_backends(robot, log, verify_detections=args.verify_detections),
        locations=robot.base.locations,
        arm_poses=robot.arm.poses,
        carry_pose=robot.arm.carry_pose,
        geometry=arm_geometry(robot),
        surfaces=robot.surfaces,
    )
    roles = ", ".join(f"{role}={value}" for role, value in call.roles.items())
    print(
        f"{args.name}({', '.join(args.arguments)}): skill '{call.skill.name}' ({call.matched_by})"
    )
    print(f"  roles: {roles or 'none'}")
    skipped: list[str] = []
    outcome = runner.run(
        args.name,
        args.arguments,
        threading.Event(),
        report=lambda _progress, status: skipped.append(status),
    )
    if not outcome.ok:
        raise CowpError(outcome.message)
    for number, line in enumerate(log.lines, start=1):
        print(f"  {number}. {line}")
    if len(log.lines) < len(call.skill.steps):
        print("  (steps without a command: already at the location, or detection not verified)")
    print("dry run: nothing moved. Add --run to execute it on the robot.")
    return 0


def run_on_robot(args: argparse.Namespace) -> int:
    from cowp_ros.ros.clients.skill_client import run_step_on_executor

    success, message = run_step_on_executor(
        args.action,
        args.name,
        args.arguments,
        server_timeout_s=args.server_timeout,
        step_timeout_s=args.step_timeout,
        say=lambda line: print(line, flush=True),
    )
    print(("done: " if success else "failed: ") + message)
    return 0 if success else 1


def run(args: argparse.Namespace) -> int:
    apply_tasks(args)
    if args.list:
        list_skills(load(args)[1])
        return 0
    if not args.name:
        raise CowpError("name a skill or a PDDL action", hint="cowp skill --list shows them all")
    if args.run:
        load(args)[1].resolve(args.name, args.arguments)  # refuse a typo before the robot
        return run_on_robot(args)
    return dry_run(args)
