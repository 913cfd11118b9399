"""A node in a context of its own, with its executor, made and closed in the one safe order.

A command-line client (`cowp task`, `cowp skill --run`, `cowp bag record`), a client
class a program embeds (`TaskClient`) and a test's probe each need the same thing: a
node that does not share rclpy's global context with other ROS code of the process, an
executor to spin it, waits with deadlines, and a close that cannot block. Two orders in
rclpy (Kilted, rclpy 9.1.2) matter, and this class keeps both, so no client can get
them wrong:

- **close: the executor before the node.** `spin_once` leaves the wait it made
  half-done (rclpy keeps its generator, with the node's handles marked in use). Shut
  down, the executor drops it; left to the garbage collector, it is finished later on
  whichever thread allocates next, on handles of a node already destroyed, and rclpy
  can block there for good (a CI run stopped there).
- **close: the node's action clients and servers by hand.** `Node.destroy_node`
  destroys publishers, subscriptions, clients, services and timers, but not its
  waitables: an `ActionClient` keeps its DDS entities (and the node's) until the garbage
  collector frees it, on whichever thread allocates next and holding the GIL. A CI run
  stopped for good there: the collector, running in a test's HTTP server thread, waited
  on a Fast DDS discovery lock that a DDS thread held, and the main thread waited on the
  GIL.
- **spinning in a thread: entities first.** rclpy's `ActionClient` joins its node
  before it has made its own lock; a spinning thread that meets it half-made dies, and
  nothing more is taken in. `spin_in_background` is therefore called after the clients
  are made.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

_JOIN_S = 5.0
"""How long close waits for a background spin to end (it ends at the next wake-up)."""


def destroy_actions(node: Node) -> None:
    """Destroy the node's action clients and servers now, on this thread.

    `Node.destroy_node` leaves them to the garbage collector (see the module docstring);
    `ActionNode.destroy_node` and `OwnNode.close` call this first."""
    for waitable in list(node.waitables):
        destroy = getattr(waitable, "destroy", None)  # ActionClient, ActionServer
        if callable(destroy):
            destroy()


class ActionNode(Node):
    """A node that makes action clients or servers: its `destroy_node` destroys them
    first (`destroy_actions`), so no node class has to remember to."""

    def destroy_node(self) -> None:
        destroy_actions(self)
        super().destroy_node()


class OwnNode:
    """`node` and `executor` in a context of their own; `close` (or `with`) undoes them.

    Spin it either from the caller's thread (`spin_until`, `spin_for`) or in a daemon
    thread (`spin_in_background`), not both.
    """

    def __init__(self, name: str) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        try:
            self.node = Node(name, context=self.context)
            self.executor = SingleThreadedExecutor(context=self.context)
            self.executor.add_node(self.node)
        except BaseException:
            rclpy.try_shutdown(context=self.context)
            raise
        self._thread: threading.Thread | None = None
        self._closed = False

    def spin_until(self, done: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
        """Spin until `done()` holds (True) or `timeout_s` passes (False)."""
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=step_s)
        return True

    def spin_for(self, seconds: float) -> None:
        """Spin for `seconds` (to let a message leave before the node goes)."""
        self.spin_until(lambda: False, seconds)

    def spin_in_background(self) -> None:
        """Spin in a daemon thread until `close`. Make action clients before calling
        this (see the module docstring)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.executor.spin, name=f"spin {self.node.get_name()}", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Executor, then the node's action clients and servers, then node, then
        context; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.executor.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=_JOIN_S)
        destroy_actions(self.node)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def __enter__(self) -> OwnNode:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
