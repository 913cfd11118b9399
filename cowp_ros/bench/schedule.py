"""Which drawn sentence the robot is told before a step, and where each one was met.

A trial's events (`simulator.ScheduledEvent`) are due at base actions, in the order
they were drawn for the reference plan. Before each attempted step the world asks its
`EventSchedule` for the event to raise there: the first due at the step's action that
is not moot (`moot`). The schedule remembers where each event was raised (steps done
and steps failed by then) or passed by as moot (steps done), which is what the judge
reads afterwards to say how a situation was handled.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import PlanStep

if TYPE_CHECKING:
    from cowp_ros.bench.simulator import ScheduledEvent


def moot(
    event: ScheduledEvent, step: PlanStep, world: PlanningTask, disabled: Collection[str]
) -> bool:
    """Whether `event` is about objects already unusable that `step` no longer uses.

    True when an earlier situation disabled all of its objects (`disabled`), none of
    them is in the step, and a role one of them would fill holds another object of the
    same kind (`vacuum_2` for `vacuum_1`) or a stand-in of another kind (`tray_1` in the
    plate's role of `find_plate`). A situation with no objects (a distractor, one about
    an action) is never moot, nor is one whose step has no role for its objects ("the
    plate is not found" before finding the cupboard).
    """
    targets = event.targets
    if not targets or any(t in step.args or t not in disabled for t in targets):
        return False
    base = base_action_name(step.action)
    if base not in world.actions:
        return False
    kinds = {world.objects[t] for t in targets if t in world.objects}
    for role, arg in zip(world.parameter_types(base), step.args, strict=False):
        used = world.objects.get(arg)
        if used is None:
            continue
        for kind in kinds:
            if used == kind and world.is_subtype(kind, role):
                return True
            if role == kind and not world.is_subtype(used, role):
                return True
    return False


class EventSchedule:
    """The events still due, and where each one was raised or passed by."""

    def __init__(self, events: Sequence[ScheduledEvent]) -> None:
        self.pending = sorted(events, key=lambda e: (e.at, e.kind != "distractor"))
        self.raised_at: dict[str, tuple[int, int]] = {}
        """Event key -> (steps done, steps failed) when it was raised."""
        self.passed_at: dict[str, int] = {}
        """Event key -> steps done when it was first passed by as moot."""

    def take(
        self,
        step: PlanStep,
        world: PlanningTask,
        disabled: Collection[str],
        done: int,
        failed: int,
    ) -> ScheduledEvent | None:
        """The event to raise before `step` (removed from the due ones), else None; the
        moot events due at its action are noted as passed by on the way."""
        base = base_action_name(step.action)
        for event in self.pending:
            if event.action != base:
                continue
            if moot(event, step, world, disabled):
                self.passed_at.setdefault(event.key, done)
                continue
            self.pending.remove(event)
            self.raised_at[event.key] = (done, failed)
            return event
        return None

    def passed(self, key: str) -> bool:
        """Whether the event `key` was passed by as moot and never raised."""
        return key in self.passed_at and key not in self.raised_at

    def met_at(self, key: str) -> int | None:
        """Steps done when the event `key` was raised, else passed by; None if neither."""
        if key in self.raised_at:
            return self.raised_at[key][0]
        return self.passed_at.get(key)
