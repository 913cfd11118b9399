"""Seconds spent per phase of a run (perceive, plan, monitor, acquire, execute), for the
task manager's report: where the time of a task went."""

from __future__ import annotations

import threading


class PhaseClock:
    """Totals and call counts per phase; safe to add to from several threads."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, phase: str, seconds: float) -> None:
        with self._lock:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds
            self.calls[phase] = self.calls.get(phase, 0) + 1

    def to_dict(self) -> dict[str, dict[str, float]]:
        with self._lock:
            return {
                phase: {"seconds": round(total, 3), "calls": self.calls[phase]}
                for phase, total in self.seconds.items()
            }
