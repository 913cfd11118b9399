"""What a benchmark method sees of a trial: the robot's view, and nothing of the judge.

A method drives the robot through a `RobotView`: it attempts steps and learns what a
robot would (the step was done, a situation was seen before it, or it failed), and it
knows the task as the robot knows it at the start (objects present, initial state,
goal). The judge file, the schedule of situations, their effects and the judge's
records stay inside the world (`cowp_ros.bench.simulator.TrialWorld`), which the view does
not hold as an attribute: asking the view for anything else raises `MethodLeakError`
naming what was asked for, so a method cannot read the answers by accident or by a
quick `episode.annotation`.

The only method that gets more is the oracle, explicitly (`cowp_ros.bench.privileged`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep

ALLOWED = ("execute", "give_up", "finished", "problem", "scene", "situations", "history")


class MethodLeakError(CowpError):
    """A method asked the robot's view for something a robot cannot see."""


@dataclass(frozen=True)
class StepObservation:
    """What the robot learns from one attempt.

    `executed`: the step was done. `situation`: a sentence the robot saw before the step
    (then the step was not done; the method decides what to do). `reason`: why a step
    failed, in words a robot's own failure detection could give ("the step failed").
    """

    executed: bool
    situation: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class _Hooks:
    """The world's robot-facing operations, as plain callables (no world reference)."""

    execute: Callable[[PlanStep], StepObservation]
    give_up: Callable[[str], None]
    finished: Callable[[], bool]
    problem: Callable[[], PlanningTask]
    situations: Callable[[], tuple[str, ...]]
    history: Callable[[], tuple[tuple[PlanStep, StepObservation], ...]]


_HOOKS: dict[int, _Hooks] = {}
"""View id -> its hooks. Kept here, not on the view, so no attribute leads to the world."""


class RobotView:
    """A method's whole interface to a trial (see the module docstring)."""

    __slots__ = ("__weakref__",)

    def __init__(self, hooks: _Hooks) -> None:
        _HOOKS[id(self)] = hooks

    def __del__(self) -> None:
        _HOOKS.pop(id(self), None)

    def _hooks(self) -> _Hooks:
        return _HOOKS[id(self)]

    def execute(self, step: PlanStep) -> StepObservation:
        """Attempt one step: done, a situation seen before it (not done), or failed."""
        return self._hooks().execute(step)

    def give_up(self, reason: str) -> None:
        """Stop: no solution (or the method cannot go on)."""
        self._hooks().give_up(reason)

    @property
    def finished(self) -> bool:
        """The trial is over: goal reached, the method gave up, or out of attempts."""
        return self._hooks().finished()

    @property
    def problem(self) -> PlanningTask:
        """The task as the robot knows it at the start: domain, objects present, state."""
        return self._hooks().problem()

    def scene(self) -> list[str]:
        """Passive scene description: the objects present, by name."""
        return sorted(self.problem.problem_object_names)

    @property
    def situations(self) -> tuple[str, ...]:
        """The sentences the robot saw so far, in order."""
        return self._hooks().situations()

    @property
    def history(self) -> tuple[tuple[PlanStep, StepObservation], ...]:
        """Every attempt so far and its outcome, in order."""
        return self._hooks().history()

    def __getattr__(self, name: str) -> Any:
        raise MethodLeakError(
            f"a benchmark method asked the robot's view for {name!r}, which a robot cannot "
            "see (the judge file, the schedule of situations and the judge's records stay "
            "in the world)",
            hint=f"a method sees only: {', '.join(ALLOWED)}; see "
            "cowp_ros/bench/view.py and the protocol in cowp_ros/bench/methods/__init__.py",
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise MethodLeakError(f"a benchmark method cannot set {name!r} on the robot's view")


Episode = RobotView
"""The name methods have always used for what `run` receives."""
