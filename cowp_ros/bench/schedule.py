"""Which drawn sentence the robot is told before a step, and where each one was met.

A trial's events (`ScheduledEvent`) are due at base actions, in the order
they were drawn for the reference plan. Before each attempted step the world asks its
`EventSchedule` for the event to raise there: the first due at the step's action that
is not moot (`moot`). The schedule remembers where each event was raised (steps done
and steps failed by then) or passed by as moot (steps done), which is what the judge
reads afterwards to say how a situation was handled.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from cowp_ros.bench.annotations import Effect, SituationEffect
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import PlanStep


@dataclass(frozen=True)
class ScheduledEvent:
    """A sentence the world raises at the first attempt of a step of `action`.

    `kind` is "situation" (from the dataset, with its effect) or "distractor" (benign).
    `at` is the index of the reference-plan step it was drawn for; `blocking` says
    whether, raised where the closed-world plan meets it, it blocks any step of that plan
    (decided once per trial by `runner.classify`, so every method is scored on the same
    split of blocking and harmless situations).
    """

    kind: str
    key: str
    text: str
    action: str
    at: int
    effect: SituationEffect | None = None
    about: str = ""  # the dataset's object word ("cup", "power"), for per-object results
    blocking: bool = False
    targets: tuple[str, ...] = ()
    """The objects it disables: the judge's task objects, cast as the trial's plan has
    them (`runner.cast_of`: "the faucet" is the faucet the closed-world plan uses)."""
    unsolvable: str = ""
    """The judge file's reason when it declares this situation unsolvable at this step
    (even for the oracle with the whole house present), else ""."""
    alternative: bool = True
    """For a blocking situation: whether the trial's present objects include one a person
    would accept in each disabled object's role (another of its kind, or a kind the judge
    accepts there) where the task can use it (a plate on the dining table, the table
    beside the area); see `usable.alternatives`."""
    alternatives: tuple[str, ...] = ()
    """Those objects, by name (a reader of a miss sees what the oracle could have used)."""

    @property
    def blocked_action(self) -> str:
        """The action a `beyond_skills` effect stops: its own, else where it is raised."""
        return (self.effect.action if self.effect is not None else "") or self.action

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "key": self.key,
            "text": self.text,
            "action": self.action,
            "at": self.at,
            "object": self.about,
            "blocking": self.blocking,
            "unsolvable": self.unsolvable,
            "alternative_present": self.alternative,
        }
        if self.alternatives:
            data["alternatives"] = list(self.alternatives)
        if self.effect is not None:
            data["effect"] = self.effect.effect.value
            data["targets"] = list(self.targets)
            data["rule"] = self.effect.rule
            if self.effect.effect is not Effect.NO_EFFECT:
                data["harm"] = self.effect.harm.value
            if self.effect.effect is Effect.BEYOND_SKILLS:
                data["blocks"] = self.blocked_action
        return data


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
