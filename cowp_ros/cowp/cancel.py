"""A cancel token that the long waits of a run look at.

A run spends its time waiting: on the model, on the planner, on the robot. A user who
cancels must not wait behind any of them, so every one of those waits takes the run's
token and ends as soon as it is cancelled: the loop checks it before each question and
each planner call, the ROS clients wait on it instead of sleeping, and the driver checks
it between steps. Cancelling is a flag set from any thread (a ROS cancel callback, a
signal handler); nothing is interrupted by force.
"""

from __future__ import annotations

import threading


class RunCancelledError(Exception):
    """The run was cancelled; it unwinds to a `canceled` outcome (never an error)."""


class CancelToken:
    """Set once, read from anywhere; `wait` sleeps until it is set or the time is up."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def is_set(self) -> bool:
        """The same as `requested`, under `threading.Event`'s name, so waits that take an
        event take a token too."""
        return self._event.is_set()

    def cancel(self, reason: str = "canceled by the user") -> None:
        """Ask the run to stop (idempotent; the first reason is kept)."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def check(self) -> None:
        """Raise `RunCancelledError` if cancelling was asked for."""
        if self._event.is_set():
            raise RunCancelledError(self.reason)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True as soon as the run is cancelled."""
        return self._event.wait(max(0.0, seconds))


class _NeverCancelled(CancelToken):
    """The token of a run nobody can cancel (a test, a benchmark trial)."""

    def cancel(self, reason: str = "") -> None:
        raise RuntimeError("this run cannot be cancelled")


NEVER = _NeverCancelled()
