"""SAME_KIND, a no-model control: on a failed step, try another object of the same kind.

It ignores every sentence and, when a step fails, stops using one of that step's
objects for which another object of the same kind is present (the first such in the
step's order that it has not dropped yet), then plans again: the second cup after the
first failed, then the second faucet if the cup was not the trouble. It never uses
another kind of object, so it handles exactly what a spare of the same kind handles.
"""

from __future__ import annotations

from collections.abc import Collection

from cowp_ros.bench.methods._control import ControlMethod
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep


def one_with_a_spare(task: PlanningTask, step: PlanStep, avoided: Collection[str]) -> set[str]:
    """The first of the step's objects with another usable object of its kind present."""
    for arg in step.args:
        if arg in avoided:
            continue
        kind = task.objects[arg]
        spares = [
            o
            for o in task.problem_object_names
            if o != arg and o not in avoided and task.objects[o] == kind
        ]
        if spares:
            return {arg}
    return set()


class SameKind(ControlMethod):
    name = "same_kind"
    label = "same kind (no model)"
    summary = "control: ignores every sentence; on a failed step tries another object of its kind"
    distrust = staticmethod(one_with_a_spare)


METHOD = SameKind
