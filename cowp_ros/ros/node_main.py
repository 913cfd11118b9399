"""The `main()` every cowp_ros node shares: start, spin, and end cleanly.

A node whose parameters are wrong raises CowpError in its constructor; the message is
printed (the supervisor shows it from the node's log) and the process exits 1 without
a traceback. Ctrl-C (SIGINT) and SIGTERM are a normal end, and a graceful one: the
executor keeps spinning while the node's `on_shutdown()` (when it has one) finishes
what is in flight, so a task manager delivers the result of the task it was running
instead of dropping it. A second signal ends the process at once.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from cowp_ros.errors import CowpError


def run_node(
    name: str,
    make_node: Callable[[], Node],
    make_executor: Callable[[], Executor] = SingleThreadedExecutor,
    args: list[str] | None = None,
) -> None:
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = make_node()
    except CowpError as err:
        print(f"{name}: error: {err}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        raise SystemExit(1) from None
    executor = make_executor()
    executor.add_node(node)
    stop = threading.Event()
    signals = 0

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            raise SystemExit(130)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    spinner = threading.Thread(target=_spin, args=(executor, stop), name=f"{name}-spin")
    spinner.start()
    try:
        while not stop.wait(0.2):
            pass
        shutdown = getattr(node, "on_shutdown", None)
        if callable(shutdown):
            shutdown()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        executor.shutdown(timeout_sec=2.0)
        spinner.join(timeout=5.0)
        node.destroy_node()
        rclpy.try_shutdown()


def _spin(executor: Executor, stop: threading.Event) -> None:
    """Spin until shut down; a spin that ends on its own (the context went) stops main."""
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        stop.set()
