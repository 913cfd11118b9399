"""What the raised situations spoiled in a trial's world, and which situation spoiled each.

A situation's effect (`annotations.Effect`) makes objects unusable or puts an action
beyond the robot's skills, visibly (the steps that need them fail) or silently (they
succeed and do harm). `Spoils` keeps that bookkeeping for `simulator.TrialWorld`: which
objects and actions are spoiled, by which sentence and which event, and which step a
visible effect stops, so that a failed step can be put down to the situation behind it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import PlanStep


@dataclass
class Spoils:
    """`disabled`: object -> the sentence that made it unusable; `beyond`: action -> the
    sentence that put it beyond the robot's skills; `silent`: those of either whose harm
    is silent; `source`: each of either -> the key of the event it is from."""

    disabled: dict[str, str] = field(default_factory=dict)
    beyond: dict[str, str] = field(default_factory=dict)
    silent: set[str] = field(default_factory=set)
    source: dict[str, str] = field(default_factory=dict)

    def spoil(self, table: dict[str, str], key: str, text: str, event: str, silent: bool) -> None:
        """Record an effect on an object or action (`table`: `disabled` or `beyond`); a
        visible one outweighs a silent one."""
        if key in table and (silent or key not in self.silent):
            return
        table[key] = text
        self.source[key] = event
        if silent:
            self.silent.add(key)
        else:
            self.silent.discard(key)

    def why_blocked(self, step: PlanStep, release_actions: Collection[str]) -> str:
        """Why a visible effect stops `step` now ("" if none does)."""
        key, is_action = self._blocker(step, release_actions)
        if not key:
            return ""
        return (
            f"cannot: {self.beyond[key]}"
            if is_action
            else f"{key} is unusable: {self.disabled[key]}"
        )

    def cause(self, step: PlanStep, release_actions: Collection[str]) -> str:
        """The key of the event whose visible effect stops `step` now ("" if none)."""
        key, _ = self._blocker(step, release_actions)
        return self.source.get(key, "")

    def _blocker(self, step: PlanStep, release_actions: Collection[str]) -> tuple[str, bool]:
        """What of `step` a visible effect spoiled, and whether it is its action: the
        action first, else its first unusable object ("" for none; a release step may let
        go of anything)."""
        base = base_action_name(step.action)
        if base in self.beyond and base not in self.silent:
            return base, True
        if base in release_actions:
            return "", False
        return next(
            (a for a in step.args if a in self.disabled and a not in self.silent), ""
        ), False
