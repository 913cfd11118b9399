"""A MultiThreadedExecutor that hands each callback to a worker once.

rclpy's MultiThreadedExecutor (Kilted, rclpy 9.1.2) submits a ready callback to its
thread pool and goes straight back to waiting. Until a worker has started that callback,
the wait offers it again and returns at once, so the spinning thread loops, holding the
GIL the workers need to start anything. Measured here: a node with two JointState
subscriptions fed at 20 Hz sat at a full core and heard 3 to 8 messages a second instead
of 40, and stayed that way; the skill executor's motion checks then read stale joint
states (a gripper "stopped" while it was moving). Upstream tracks it as ros2/rclpy#1452;
the fix, ros2/rclpy#1547, was merged upstream after Kilted's first release.

Checked against: rclpy 9.1.2 (the PyPI wheels of requirements/ros.txt, where both the
defect and this workaround were measured). rosdistro's Kilted list names rclpy 9.1.6;
whether 9.1.6 carries #1547 was not verified here (its sources could not be read from
this machine), so the workaround stays until a Kilted release with the fix is measured
with benchmarks/bench_executors.py. It is harmless where the fix is present: a callback
is still handed over once and run by a worker.

This executor waits, after each hand-over, until a worker has picked the callback up,
then waits for the next ready one: the same callbacks, threads and callback groups, and
the spinning thread sleeps while nothing is ready.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)

TAKEN_CHECK_S = 0.1
"""How often a hand-over that no worker has taken yet re-checks for shutdown."""

NODE_THREADS = 8
"""Worker threads of the executor nodes, whatever the machine's CPU count.

rclpy's default follows the CPUs this process may use; in a one-CPU container that is
one worker. The skill executor's ExecuteSkill callback (and the task manager's RunTask
callback) block that worker while the motion runs, waiting on callbacks that need
workers of their own: joint states, odometry, speed scaling, detections and the
drivers' action responses, plus a cancel or a second goal arriving meanwhile. With one
worker those never run and the node deadlocks; with two the first feedback message
already waits behind the next. Waiting threads cost no CPU, so the count follows the
node's design (one blocking goal, up to six callbacks it waits on, one cancel), not the
hardware."""


class SteadyMultiThreadedExecutor(MultiThreadedExecutor):
    """MultiThreadedExecutor whose spinning thread waits for each callback to start.

    `num_threads` defaults to NODE_THREADS (not to the CPU count, as rclpy's does).
    """

    def __init__(self, num_threads: int | None = None, *, context: Any = None) -> None:
        super().__init__(num_threads or NODE_THREADS, context=context)

    def _spin_once_impl(
        self,
        timeout_sec: float | Any | None = None,
        wait_condition: Callable[[], bool] = lambda: False,
    ) -> None:
        try:
            handler, _entity, _node = self.wait_for_ready_callbacks(
                timeout_sec, None, wait_condition
            )
        except (
            ExternalShutdownException,
            ShutdownException,
            TimeoutException,
            ConditionReachedException,
        ):
            return
        taken = threading.Event()

        def run() -> None:
            taken.set()
            handler()

        self._executor.submit(run)
        self._futures.append(handler)
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()  # a callback's exception surfaces here, as upstream
        while not taken.wait(TAKEN_CHECK_S):
            if self._is_shutdown or not self._context.ok():
                return
