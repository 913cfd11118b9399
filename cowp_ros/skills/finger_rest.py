"""When a gripper's fingers have come to rest, judged only from positions actually heard.

A grasp verdict reads where the fingers stopped, so "stopped" must mean the fingers
were seen not to move, never that no news came. Two things look like a stop to a
naive watcher and are not one: a joint-state publisher (or the callback thread that
hears it) held up for longer than the settle time, after which the same old position
is read again and again; and a command the driver has not yet acted on, so the
fingers have not started to move. Here a stop needs positions heard across the whole
settle time with less than the tolerance between them, counted from when each message
arrived; and fingers that never moved are judged only after `response_time_s` (they
are blocked, or already resting on the object). Pure logic, so the rule is tested
without ROS; the gripper backends feed it from their joint-state cache.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class RestRule:
    """robot.yaml's gripper tolerances that define a stop."""

    tolerance_m: float  # moving less than this is standing still
    settle_time_s: float  # ...for at least this long
    response_time_s: float  # fingers that never moved are judged after this long


class FingerRest:
    """Positions heard since a command, and whether they show the fingers at rest."""

    def __init__(self, rule: RestRule, target: float, started_at: float) -> None:
        self.rule = rule
        self.target = target
        self.started_at = started_at
        self._samples: deque[tuple[float, float]] = deque()
        self._first: float | None = None
        self.moved = False

    def heard(self, at: float, position: float) -> None:
        """A position that arrived at `at` (monotonic seconds); repeats of an old message
        (same arrival time) are ignored, since they are no news."""
        if self._samples and at <= self._samples[-1][0]:
            return
        if self._first is None:
            self._first = position
        elif abs(position - self._first) > self.rule.tolerance_m:
            self.moved = True
        self._samples.append((at, position))

    def at_rest(self) -> bool:
        """At the target; or heard still for settle_time_s after moving; or heard still
        response_time_s after the command without ever moving."""
        if not self._samples:
            return False
        latest_at, latest = self._samples[-1]
        if abs(latest - self.target) <= self.rule.tolerance_m:
            return True
        if not self.moved:  # still where they were, as heard this long after the command
            return latest_at - self.started_at >= self.rule.response_time_s
        window_start = latest_at - self.rule.settle_time_s
        # The newest sample heard at or before the window's start anchors it: without
        # one, the positions heard do not yet cover a whole settle time.
        while len(self._samples) >= 2 and self._samples[1][0] <= window_start:
            self._samples.popleft()
        if self._samples[0][0] > window_start:
            return False
        values = [position for _, position in self._samples]
        return max(values) - min(values) <= self.rule.tolerance_m
