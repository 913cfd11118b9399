"""The one interface every planner offers (the loop's `Planner` port), and its error."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.result import PlanResult

DEFAULT_TIMEOUT_S = 60.0


class PlannerError(CowpError):
    """A planner that could not run, or crashed on a task (not "no plan": that is a result)."""


@runtime_checkable
class Planner(Protocol):
    """Finds a plan for a task, or says there is none, within a deadline."""

    name: str

    def solve(self, task: PlanningTask, timeout_s: float = DEFAULT_TIMEOUT_S) -> PlanResult:
        """Plan for `task`; never runs past `timeout_s` (returns a TIMEOUT result)."""
        ...
