"""The `main()` every cowp_ros node shares: start, spin, and end cleanly.

A node whose parameters are wrong raises CowpError in its constructor; the message is
printed (the supervisor shows it from the node's log) and the process exits 1 without
a traceback. Ctrl-C and an external shutdown are a normal end.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from cowp_ros.errors import CowpError


def run_node(
    name: str,
    make_node: Callable[[], Node],
    make_executor: Callable[[], Executor] = SingleThreadedExecutor,
    args: list[str] | None = None,
) -> None:
    rclpy.init(args=args)
    try:
        node = make_node()
    except CowpError as err:
        print(f"{name}: error: {err}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        raise SystemExit(1) from None
    executor = make_executor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
