"""Argument types the subcommands share, so a bad value is refused by argparse itself.

Refused values get argparse's usage line and exit code 2, never a traceback and never a
silent substitute (`--timeout nan` used to become 0.1 s).
"""

from __future__ import annotations

import argparse
import math

MAX_SECONDS = 7 * 24 * 3600.0
"""A week: any longer deadline is a typo, and waits that long overflow some timers."""


def positive_seconds(text: str) -> float:
    """A number of seconds > 0, finite and at most a week."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a positive, finite number of seconds (e.g. 60)"
        )
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r}: at most {MAX_SECONDS:.0f} seconds (a week)")
    return value


def list_tasks_in_help(parser: argparse.ArgumentParser) -> None:
    """End `parser`'s help with the tasks it can run, read only when help is shown:
    reading the registry (tasks.yaml) costs every `cowp plan` 30 ms otherwise, and
    importing it 40 ms more before `cowp plan` can start its planner."""
    shown = parser.format_help

    def format_help() -> str:
        from cowp_ros.tasks import describe_tasks

        parser.epilog = describe_tasks()
        return shown()

    setattr(parser, "format_help", format_help)  # noqa: B010 - an instance's own help
