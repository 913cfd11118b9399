"""What the open-world loop knows during one run, and what it answers an event with.

The loop (`loop.OpenWorldPlanner`) keeps one `RunState`; its policies (`policies`) and
its narration (`narration`) read the same values, so they live here, below all three.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from cowp_ros.cowp.answers import PlanCheck, SituationFact
from cowp_ros.cowp.loop_events import Refusal
from cowp_ros.cowp.situation import Situation
from cowp_ros.planning import PlanStep

__all__ = ["Blocked", "KnownSituation", "LearnedRole", "Reaction", "RunState"]


class Reaction(enum.Enum):
    """What `observe` (or `step_done`) did about an event."""

    FEASIBLE = "feasible"  # the plan still holds; nothing changed
    REPLANNED = "replanned"  # preconditions added, a new plan found
    ACQUIRED = "acquired"  # knowledge acquired (action variants), a new plan found
    NO_SOLUTION = "no_solution"

    @property
    def text(self) -> str:
        """What the reaction means for the robot, in words (RunTask feedback)."""
        return _REACTION_TEXT[self]


_REACTION_TEXT = {
    Reaction.FEASIBLE: "the plan still works: keeping it",
    Reaction.REPLANNED: "changed the plan",
    Reaction.ACQUIRED: "changed the plan with what was learned",
    Reaction.NO_SOLUTION: "no plan is left",
}


@dataclass
class KnownSituation:
    """A situation observed during the run, and its fact once the monitor needed one."""

    situation: Situation
    observed_before_step: int
    fact: SituationFact | None = None
    set_aside: bool = False  # its object's role went to a stand-in (policies.MootPolicy)

    @property
    def text(self) -> str:
        return self.situation.text


@dataclass
class LearnedRole:
    """Acquired knowledge: `new_type` can take `role_type`'s role in `actions`."""

    role_type: str
    new_type: str
    actions: list[str]
    situation: str


@dataclass
class RunState:
    """The plan left, the steps done, the situations seen and what was learned."""

    remaining: list[PlanStep] = field(default_factory=list)
    executed: list[PlanStep] = field(default_factory=list)
    situations: list[KnownSituation] = field(default_factory=list)
    learned: list[LearnedRole] = field(default_factory=list)
    replans_for_situations: list[str] = field(default_factory=list)
    tried_types: dict[str, set[str]] = field(default_factory=dict)
    refused: dict[str, list[Refusal]] = field(default_factory=dict)
    failed_in_a_row: list[PlanStep] = field(default_factory=list)
    failure: str = ""


@dataclass(frozen=True)
class Blocked:
    """The first remaining step a known situation blocks, and the check that said so."""

    index: int
    step: PlanStep
    known: KnownSituation
    check: PlanCheck
