"""One report schema for every run, whoever started it, and one reader for it.

`cowp run` and the task manager both write a run's report as the loop's own record
(`CowpReport.to_dict()`: task, description, planner, model, outcome, explanation,
usage, events) with how the run ended on top; what only one of them knows goes into a
section of its own (the task manager's `graph`: the goal as sent, the steps the robot
executed, situations dropped, time per phase, requests per service). So a script that
reads reports reads them all with `read_report`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.cowp.report import CowpReport
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage

REPORT_KEYS = ("task", "description", "planner", "model", "outcome", "explanation", "usage")
"""Every report has these (and `events`, a list of objects with a `kind` and a `text`)."""


def usage_summary(usage: Usage) -> dict[str, Any]:
    """A model's usage as reports hold it."""
    return {
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cache_hits": usage.cache_hits,
        "seconds": round(usage.seconds, 3),
    }


def report_document(
    report: CowpReport | None,
    *,
    task: str,
    planner: str = "",
    outcome: str | None = None,
    explanation: str | None = None,
    error: dict[str, str] | None = None,
    **sections: Any,
) -> dict[str, Any]:
    """The report of a run: the loop's record (or an empty one when the run ended before
    a loop existed), how the run ended, the error if one ended it, and `sections`."""
    if report is None:
        data: dict[str, Any] = {
            "task": task,
            "description": "",
            "planner": planner,
            "model": "",
            "outcome": "not_planned",
            "explanation": "",
            "usage": {},
            "events": [],
        }
    else:
        data = report.to_dict()
    if outcome is not None:
        data["outcome"] = outcome
    if explanation is not None:
        data["explanation"] = explanation
    if error is not None:
        data["error"] = error
    data.update(sections)
    return data


@dataclass(frozen=True)
class RunReport:
    """A report as read back: the common fields, and every other section by name."""

    task: str
    description: str
    planner: str
    model: str
    outcome: str
    explanation: str
    usage: dict[str, Any]
    events: list[dict[str, Any]]
    sections: dict[str, Any] = field(default_factory=dict)

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("kind") == kind]


def read_report(path: Path | str) -> RunReport:
    """Read any run's report; a file that is not one is a clear error."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CowpError(f"cannot read the report {path}: {err.strerror}") from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CowpError(f"{path} is not a JSON report: {err}") from err
    if not isinstance(data, dict):
        raise CowpError(f"{path} is not a run report: it holds no JSON object")
    missing = [key for key in (*REPORT_KEYS, "events") if key not in data]
    if missing:
        raise CowpError(f"{path} is not a run report: it lacks {', '.join(missing)}")
    events = data["events"]
    if not isinstance(events, list) or not all(
        isinstance(e, dict) and isinstance(e.get("kind"), str) and isinstance(e.get("text"), str)
        for e in events
    ):
        raise CowpError(f"{path} is not a run report: its events are not kind/text records")
    if not isinstance(data["usage"], dict):
        raise CowpError(f"{path} is not a run report: its usage is not an object")
    common = {key: data[key] for key in REPORT_KEYS}
    for key in REPORT_KEYS:
        if key != "usage" and not isinstance(common[key], str):
            raise CowpError(f"{path} is not a run report: {key} is not text")
    sections = {k: v for k, v in data.items() if k not in (*REPORT_KEYS, "events")}
    return RunReport(**common, events=events, sections=sections)
