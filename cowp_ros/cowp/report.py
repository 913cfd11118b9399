"""The record of one open-world run: every plan, question, answer and PDDL change.

Each event carries a one-line `text` a person reads (the CLI prints these, the ROS
task manager sends them as action feedback) and the structured `data` behind it. The
whole report is plain JSON, so a run can be inspected, diffed, or scored afterwards.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.cowp.events import EventKind


@dataclass(frozen=True)
class Event:
    """One thing that happened; `data` is JSON-serialisable."""

    kind: EventKind
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    at_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "text": self.text,
            "at_s": round(self.at_s, 3),
            **self.data,
        }


@dataclass
class CowpReport:
    """Everything one run did, in order, plus its outcome and one-line explanation."""

    task: str
    description: str
    planner: str
    model: str
    events: list[Event] = field(default_factory=list)
    outcome: str = "not_planned"
    explanation: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic, repr=False)
    listeners: list[Callable[[Event], None]] = field(default_factory=list, repr=False)

    def add(self, kind: EventKind, text: str, **data: Any) -> Event:
        """Append an event and pass it to every listener (the CLI's narrative, the ROS
        task manager's action feedback) as it happens."""
        event = Event(EventKind(kind), text, data, time.monotonic() - self.started)
        self.events.append(event)
        for listener in self.listeners:
            listener(event)
        return event

    def of_kind(self, kind: EventKind | str) -> list[Event]:
        """The events of one kind, in order."""
        wanted = EventKind(kind)
        return [e for e in self.events if e.kind is wanted]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "description": self.description,
            "planner": self.planner,
            "model": self.model,
            "outcome": self.outcome,
            "explanation": self.explanation,
            "usage": self.usage,
            "events": [e.to_dict() for e in self.events],
        }

    def to_json(self) -> str:
        """Strict JSON: a NaN or infinity anywhere becomes null, never a bare `NaN`."""
        return strict_json(self.to_dict())

    def write(self, path: Path | str) -> Path:
        """Write the report as JSON (`report_file.write_report`: atomic, no symlink
        followed); a clear error when the path cannot be written."""
        from cowp_ros.cowp.report_file import write_report

        return write_report(self.to_json() + "\n", Path(path))


def strict_json(data: Any) -> str:
    """`data` as indented strict JSON: NaN and infinities become null."""
    return json.dumps(_finite(data), indent=2, sort_keys=False, allow_nan=False)


def _finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (for strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value
