"""Steps the physics world in its own thread, paced against the wall clock.

The world advances in control periods (10 ms of simulated time); after each, the hooks
run (publish joint states, check the safety invariants). `real_time_factor` caps how
fast simulated time may run against the wall clock (1.0: real time, as a robot; 0: as
fast as the machine can, for tests and benchmarks); the achieved factor is measured
and kept, since on a loaded machine the world may run slower than asked. Every reader
and writer of the world takes `lock`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cowp_ros.physics.world import PhysicsWorld

CONTROL_PERIOD_S = 0.01


class SteppingThread:
    def __init__(
        self,
        world: PhysicsWorld,
        *,
        real_time_factor: float,
        hooks: list[Callable[[], None]] | None = None,
    ) -> None:
        self.world = world
        self.real_time_factor = real_time_factor
        self.hooks = list(hooks or [])
        self.lock = threading.RLock()
        self.ticked = threading.Condition(self.lock)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="physics", daemon=True)
        self.wall_started = 0.0
        self.sim_started = 0.0
        self.steps_per_period = max(1, round(CONTROL_PERIOD_S / world.model.opt.timestep))

    def start(self) -> None:
        self.wall_started = time.monotonic()
        self.sim_started = self.world.time
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)

    def achieved_factor(self) -> float:
        """Simulated seconds per wall-clock second since the start."""
        wall = time.monotonic() - self.wall_started
        return (self.world.time - self.sim_started) / wall if wall > 0 else 0.0

    def _run(self) -> None:
        while not self._stop.is_set():
            with self.lock:
                self.world.step(self.steps_per_period)
                for hook in self.hooks:
                    hook()
                self.ticked.notify_all()
            if self.real_time_factor > 0:
                due = (
                    self.wall_started + (self.world.time - self.sim_started) / self.real_time_factor
                )
                delay = due - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
            else:
                time.sleep(0)  # let the node's threads take the lock

    def wait_sim(self, seconds: float, cancel: threading.Event | None = None) -> bool:
        """Wait until `seconds` of simulated time have passed (False if canceled or the
        thread stopped). Called without the lock held."""
        with self.lock:
            end = self.world.time + seconds
            while self.world.time < end:
                if self._stop.is_set() or (cancel is not None and cancel.is_set()):
                    return False
                self.ticked.wait(0.2)
        return True
