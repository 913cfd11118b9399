"""RETRY, a no-model control: on a failed step, drop every object of that step and replan.

It ignores every sentence (it cannot read), and learns only that a step failed: it then
stops using all of that step's objects (a release step aside) and plans again from what
it did. It needs no model and no knowledge: what it handles, retrying handles. A
silent harm (a dirty cup: the step succeeds) it never notices.
"""

from __future__ import annotations

from collections.abc import Collection

from cowp_ros.bench.methods._control import ControlMethod
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep


def every_object(task: PlanningTask, step: PlanStep, avoided: Collection[str]) -> set[str]:
    """All of the failed step's objects that it still used."""
    return {a for a in step.args if a not in avoided}


class Retry(ControlMethod):
    name = "retry"
    label = "retry (no model)"
    summary = "control: ignores every sentence; on a failed step drops its objects and replans"
    distrust = staticmethod(every_object)


METHOD = Retry
