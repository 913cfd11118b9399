"""`cowp doctor`: report whether ROS 2, the interfaces, DDS and optional parts work."""

from __future__ import annotations

import argparse
import time

from cowp_ros.bringup.doctor import all_checks


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the workspace: ROS 2, interfaces, DDS across processes, optional parts",
        description="Check that this workspace can run the stack. Exit 0 when every "
        "required check passes; optional parts are reported, not required.",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    failed = 0
    for make_check in all_checks():
        start = time.monotonic()
        check = make_check()
        mark = "ok  " if check.ok else ("FAIL" if check.required else "--  ")
        print(f"[{mark}] {check.name}: {check.detail} ({time.monotonic() - start:.1f} s)")
        failed += int(check.required and not check.ok)
    if failed:
        print(f"\n{failed} required check(s) failed.")
        return 1
    print("\nAll required checks passed.")
    return 0
