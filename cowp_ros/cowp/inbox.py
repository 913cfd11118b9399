"""Situations waiting for the loop: bounded, deduplicated and rate-limited.

Situations arrive whenever something reports one (the camera's detector, a scenario, a
bag, a person on a topic), and each distinct one costs the loop model questions. A
source that repeats itself, or floods the topic, must not turn a task into hours of
questions, so the inbox keeps what reaches the loop within fixed bounds:

- a sentence already waiting, or already given to the loop in this run, is dropped;
- at most `max_waiting` wait at once (newer ones are dropped, the older ones kept: the
  first report of a problem is the one to act on);
- at most `max_per_run` distinct situations reach the loop in one run;
- at most `max_per_s` are accepted per second on average (a token bucket with a burst
  of `max_waiting`).

A sentence the loop would refuse (empty, or longer than `MAX_SITUATION_CHARS`) is
dropped here. Every drop is counted by its reason, for the run's report. Safe to use
from several threads (a ROS subscription puts, the run takes).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from cowp_ros.cowp.situation import Situation
from cowp_ros.safe_text import MAX_SITUATION_CHARS


@dataclass(frozen=True)
class InboxLimits:
    max_waiting: int = 10
    max_per_run: int = 20
    max_per_s: float = 2.0

    def __post_init__(self) -> None:
        if self.max_waiting < 1 or self.max_per_run < 1 or not self.max_per_s > 0:
            raise ValueError("inbox limits must be positive")


@dataclass(frozen=True)
class Arrival:
    """A situation and when it arrived (monotonic seconds)."""

    situation: Situation
    at: float


class SituationInbox:
    """See the module docstring."""

    def __init__(
        self, limits: InboxLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or InboxLimits()
        self._clock = clock
        self._lock = threading.Lock()
        self._waiting: list[Arrival] = []
        self._given: set[str] = set()
        self._tokens = float(self.limits.max_waiting)
        self._refilled = clock()
        self.dropped: Counter[str] = Counter()

    def put(self, situation: Situation | str) -> bool:
        """Offer a situation; False when it was dropped (the reason is counted)."""
        seen = Situation.of(situation)
        if not seen.text:
            return self._drop("empty")
        if len(seen.text) > MAX_SITUATION_CHARS:
            return self._drop("too long")
        key = seen.text.lower()
        with self._lock:
            now = self._clock()
            self._refill(now)
            if key in self._given or any(a.situation.text.lower() == key for a in self._waiting):
                return self._drop("repeated")
            if len(self._given) + len(self._waiting) >= self.limits.max_per_run:
                return self._drop("over the per-run limit")
            if len(self._waiting) >= self.limits.max_waiting:
                return self._drop("queue full")
            if self._tokens < 1.0:
                return self._drop("too fast")
            self._tokens -= 1.0
            self._waiting.append(Arrival(seen, now))
            return True

    def take(self) -> list[Arrival]:
        """Everything waiting, oldest first; each is remembered as given to the loop."""
        with self._lock:
            taken, self._waiting = self._waiting, []
            self._given.update(a.situation.text.lower() for a in taken)
            return taken

    def reset(self) -> None:
        """A new run: forget what waits (it belongs to an earlier task) and what was given."""
        with self._lock:
            self._waiting.clear()
            self._given.clear()
            self.dropped.clear()
            self._tokens = float(self.limits.max_waiting)
            self._refilled = self._clock()

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self._refilled)
        self._refilled = now
        self._tokens = min(
            float(self.limits.max_waiting), self._tokens + elapsed * self.limits.max_per_s
        )

    def _drop(self, reason: str) -> bool:
        self.dropped[reason] += 1
        return False
