"""RunTask feedback as the story a person reads in the terminal.

The task manager's feedback already says what happened in words (`last_event`); the
narrator adds the phase and the step counter, and prints each event once (feedback can
repeat an event when only the plan changed).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from cowp_ros.cowp.events import FeedbackPhase

_PHASES = {phase.value: phase for phase in FeedbackPhase}


class Narrator:
    def __init__(self, stream: TextIO = sys.stdout) -> None:
        self.stream = stream
        self._last: tuple[str, str] | None = None

    def line(self, feedback: Any) -> str | None:
        """The line for one RunTask feedback message, or None when it repeats the last."""
        key = (feedback.phase, feedback.last_event)
        if key == self._last:
            return None
        self._last = key
        phase = _PHASES.get(feedback.phase)
        mark = phase.mark if phase is not None else feedback.phase
        step = (
            f" {feedback.step_index + 1}/{len(feedback.plan) + feedback.step_index}"
            if (phase is FeedbackPhase.EXECUTING and feedback.step_index >= 0)
            else ""
        )
        return f"  [{mark:>5}{step}] {feedback.last_event}"

    def show(self, feedback: Any) -> None:
        text = self.line(feedback)
        if text is not None:
            print(text, file=self.stream, flush=True)


def follow_task(client: Any, timeout_s: float, stop: threading.Event) -> Any:
    """Narrate a sent goal's feedback until its result, and return the result.

    `client` is a `TaskClient` whose goal is out. When `stop` is set (Ctrl-C) the goal
    is canceled and followed on to its result; after `timeout_s` it is canceled once.
    """
    narrator = Narrator()
    deadline = time.monotonic() + timeout_s
    while not client.is_task_complete():
        for feedback in client.get_feedback():
            narrator.show(feedback)
        if stop.is_set():
            print("interrupted: canceling the task", flush=True)
            client.cancel_task()
            stop.clear()
        if time.monotonic() > deadline:
            print(f"no result after {timeout_s:.0f} s: canceling the task", flush=True)
            client.cancel_task()
            deadline = float("inf")
    for feedback in client.get_feedback():
        narrator.show(feedback)
    return client.get_result()
