"""The `cowp` command line.

Each subcommand lives in its own module of this package and exposes
`register(subparsers)`, which adds its parser and sets `func` (a callable taking the
parsed arguments and returning an exit code). Modules are discovered, so a new
subcommand is a new file and nothing else changes.

Only the module of the command given is imported: which module adds which command is
read from their sources (`subparsers.add_parser("name", ...)`), since importing them all
(the benchmark, the model client, numpy) costs a second or two that `cowp replay` or
`cowp task send` would wait for. Help, an unknown command, or a module whose commands
cannot be read that way imports them all.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cowp_ros import __version__
from cowp_ros.errors import CowpError, Terminated

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _parser_with_stop_signals_for_this_thread(
    argv: Sequence[str] | None = None,
) -> argparse.ArgumentParser:
    """`build_parser()` with Ctrl-C and SIGTERM blocked while the subcommands import.

    Libraries start helper threads as they import (numpy's BLAS pool), and a thread
    inherits the signal mask of the one that starts it. Started with these signals
    blocked, the helpers never take a Ctrl-C meant for the command: the kernel gives it
    to the thread that runs the command, whose blocking wait it interrupts at once. One
    that arrives during the imports waits until the mask is restored, then interrupts.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        return build_parser(argv)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser with the subcommands registered: the one `argv` names (and
    any module whose commands its source does not say), else every discovered one."""
    parser = argparse.ArgumentParser(
        prog="cowp",
        description="Open-world task planning (COWP) for a ROS 2 mobile manipulator.",
    )
    parser.add_argument("--version", action="version", version=f"cowp_ros {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {
        info.name: commands_in(Path(__path__[0]) / f"{info.name}.py")
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
        if not info.name.startswith("_")
    }
    wanted = argv[0] if argv and not argv[0].startswith("-") else None
    if wanted is not None and not any(wanted in commands for commands in modules.values()):
        wanted = None  # argparse's error then lists every command
    for name, commands in modules.items():
        if wanted is not None and commands and wanted not in commands:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(subparsers)
    return parser


_ADD_PARSER = re.compile(r"""subparsers\.add_parser\(\s*["']([^"']+)["']""")


def commands_in(source: Path) -> frozenset[str]:
    """The commands a subcommand module adds, read from its source without importing it:
    the names in its `subparsers.add_parser("name", ...)` calls (none when unreadable).
    A pattern, not a parse: parsing every module's source cost each command 60 ms."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return frozenset()
    return frozenset(_ADD_PARSER.findall(text))


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `cowp` console script.

    SIGTERM ends a command as Ctrl-C does (`Terminated`), so that child processes are
    stopped, temporary folders removed and reports written; the exit code is 143.
    """
    try:
        # imports the command's module (every one for help): seconds on a busy machine
        given = list(sys.argv[1:] if argv is None else argv)
        parser = _parser_with_stop_signals_for_this_thread(given)
        args = parser.parse_args(given)
    except KeyboardInterrupt:
        print("cowp: interrupted", file=sys.stderr)
        return 130
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    previous = None
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        try:
            previous = signal.signal(signal.SIGTERM, _terminate)
        except ValueError:  # not the main thread (a test calling main() from one)
            previous = None
    try:
        return int(func(args) or 0)
    except CowpError as err:
        print(f"cowp {args.command}: error: {err}", file=sys.stderr)
        return 1
    except Terminated:
        print(f"cowp {args.command}: terminated", file=sys.stderr)
        return _stopped(143, argv)
    except KeyboardInterrupt:
        print(f"cowp {args.command}: interrupted", file=sys.stderr)
        return _stopped(130, argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stopped(code: int, argv: Sequence[str] | None) -> int:
    """End the process now after Ctrl-C or SIGTERM (the command line's own run).

    The command has already cleaned up (its context managers stopped servers and child
    processes, removed temporary folders, wrote the report). What is left is the
    interpreter tearing down every library the subcommands imported: seconds of native
    destructors on a busy machine, while the user waits for the prompt. The Python exit
    handlers still run; the native teardown is skipped. A caller that passed `argv`
    (tests, scripts) gets the code back instead.
    """
    if argv is not None:
        return code
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
