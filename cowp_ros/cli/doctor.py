"""`cowp doctor [--profile P]`: report whether ROS 2, the interfaces, DDS and optional
parts work, and whether everything profile P's nodes need is installed."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from cowp_ros.bringup.doctor import all_checks, check_dds_roundtrip, profile_needs, refusal
from cowp_ros.cli._tasks import add_tasks_argument, apply_tasks


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the workspace (ROS 2, interfaces, DDS, optional parts) and a profile",
        description="Check that this workspace can run the stack. Exit 0 when every "
        "required check passes; optional parts are reported, not required. With "
        "--profile, also check everything that profile's nodes and launch file need "
        "(models, servers, ROS packages) and print the command that installs each "
        "missing piece.",
    )
    parser.add_argument(
        "--profile", help="also check this profile of config/bringup.yaml (sim, robot, gazebo)"
    )
    parser.add_argument(
        "--task",
        help="only list every action of this task with the skill it runs and which of its "
        "parameters fills each role (exit 1 if one has no skill)",
    )
    parser.add_argument(
        "--skills", type=Path, help="the skill map for --task (default config/skills.yaml)"
    )
    add_tasks_argument(parser)
    parser.add_argument("--spec", type=Path, help="node spec YAML (default config/bringup.yaml)")
    parser.add_argument(
        "--skip-dds", action="store_true", help="skip the DDS round trip between two processes"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    apply_tasks(args)
    if args.task:
        return task_skills(args.task, args.skills)
    failed = 0
    for make_check in all_checks():
        if args.skip_dds and make_check is check_dds_roundtrip:
            continue
        start = time.monotonic()
        check = make_check()
        mark = "ok  " if check.ok else ("FAIL" if check.required else "--  ")
        print(f"[{mark}] {check.name}: {check.detail} ({time.monotonic() - start:.1f} s)")
        failed += int(check.required and not check.ok)
    if args.profile:
        from cowp_ros.bringup.spec import load_profile

        profile = load_profile(args.profile, args.spec)
        print(f"\nprofile '{profile.name}': {profile.description}")
        needs = profile_needs(profile, with_launch=True, spec_path=args.spec)
        for need in needs:
            print(f"[{'ok  ' if need.ok else 'FAIL'}] {need.node}: {need.what}: {need.detail}")
        missing = [need for need in needs if not need.ok]
        if missing:
            print(f"\n{refusal(profile.name, missing)}")
            failed += len(missing)
    if failed:
        print(f"\n{failed} required check(s) failed.")
        return 1
    print("\nAll required checks passed.")
    return 0


def task_skills(task: str, skills: Path | None) -> int:
    """`cowp doctor --task T`: each action of T, the skill it runs, each role's parameter."""
    from cowp_ros.resources import share_path
    from cowp_ros.skills.config import load_robot_config
    from cowp_ros.skills.roles import binding_table, with_tasks
    from cowp_ros.skills.skill_map import load_skill_map
    from cowp_ros.tasks import all_tasks, get_task

    spec = get_task(task)
    robot = load_robot_config(share_path("config", "robot.yaml"))
    path = skills or share_path("config", "skills.yaml")
    skill_map = with_tasks(
        load_skill_map(path, arm_poses=set(robot.arm.poses)), all_tasks().values()
    )
    print(f"task {spec.name} ({spec.domain_path}); skills from {path}:")
    rows = binding_table(skill_map, spec)
    for row in rows:
        print(f"  {row.line()}")
    unbound = [row.action for row in rows if row.skill is None]
    if unbound:
        print(f"\n{len(unbound)} action(s) run no skill: {', '.join(unbound)}")
        print("  add each under actions: in the skill map, or under skills: in the task's entry")
        return 1
    print(f"\nevery action of {spec.name} runs a skill")
    return 0
