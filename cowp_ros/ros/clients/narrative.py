"""RunTask feedback as the story a person reads in the terminal.

The task manager's feedback already says what happened in words (`last_event`); the
narrator adds the phase and the step counter, and prints each event once (feedback can
repeat an event when only the plan changed).
"""

from __future__ import annotations

import sys
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
