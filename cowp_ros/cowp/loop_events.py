"""What happens in the open-world loop, typed: one class per thing the report records.

The loop (`loop.OpenWorldPlanner`) and its PDDL repairs (`repairs`) tell these, with
the values behind them; `narration.entry` turns each into the report's event (its kind,
the line a person reads, the JSON data). A new thing to tell is a class here and a case
there; the loop holds no sentences.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cowp_ros.cowp.answers import MonitorVerdict, RoleQuestion, Selection, SituationFact
from cowp_ros.cowp.situation import Situation
from cowp_ros.pddl import Atom, Literal
from cowp_ros.planning import PlanResult, PlanStep

__all__ = [
    "Asked",
    "Blamed",
    "Chose",
    "Completed",
    "ConstantMade",
    "EditSkipped",
    "FactAdded",
    "GaveUp",
    "Learned",
    "LoopEvent",
    "NoRole",
    "NoSolution",
    "NoStandInHelps",
    "NotPlanned",
    "PlanRanOut",
    "Planned",
    "PreconditionAdded",
    "Reason",
    "Refusal",
    "RoleAsked",
    "Saw",
    "SetAside",
    "StepDone",
    "StepFailed",
    "Understood",
    "VariantAdded",
    "Why",
]


class Why(enum.Enum):
    """Why the loop called the planner."""

    CLOSED_WORLD = "closed_world"  # the first plan
    STEP_FAILED = "step_failed"  # a step failed, nothing blamed
    RAN_OUT = "ran_out"  # the plan ended before the goal
    FAILED_BECAUSE = "failed_because"  # a step failed and a situation was blamed
    UNSUITABLE = "unsuitable"  # the monitor blocked a step
    STAND_IN = "stand_in"  # a stand-in's action variants joined the domain


@dataclass(frozen=True)
class Reason:
    """Why a plan was asked for, with the step, situation or stand-in it concerns."""

    why: Why
    step: PlanStep | None = None
    situation: str = ""
    new_type: str = ""
    role_type: str = ""


# ---- why a run has no solution -------------------------------------------------------


@dataclass(frozen=True)
class NotPlanned:
    """Not even the closed world has a plan."""

    detail: str


@dataclass(frozen=True)
class NoStandInHelps:
    """The blocking fact names no object of the step: every stand-in's copy keeps it.

    `ruled_out`: kinds close to the step's role that the domain gives no plan in it
    (tried only for a fact about the world)."""

    situation: str
    about_kind: str | None  # None: a fact about the world
    step_description: str
    role_type: str | None = None
    ruled_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """A kind asked about for a role and refused: `doing` is what was found unsuitable,
    in the question's words ("turn on a broom"), or "" when the kind was refused for the
    role itself."""

    candidate_type: str
    doing: str = ""
    cut_off: str = ""
    """ "P 0.898, needs 0.90" where P(yes) fell short of a threshold, else ""."""


@dataclass(frozen=True)
class NoRole:
    """No present object could take the failed object's role (or the step has none).

    `asked`: how many kinds were asked about for the role; `refused`: those refused, and
    for what (the others were accepted but gave no plan); `ruled_out`: close kinds not
    asked about because the domain gives no plan with them in the role."""

    situation: str
    role_type: str | None
    asked: int = 0
    refused: tuple[Refusal, ...] = ()
    ruled_out: tuple[str, ...] = ()
    held: str = ""
    """Why the hand cannot take a stand-in (`roles.held_without_release`), or ""."""


@dataclass(frozen=True)
class PlanRanOut:
    """The plan ended before the goal, and no new plan exists."""


NoSolution = NotPlanned | NoStandInHelps | NoRole | PlanRanOut


# ---- the events ----------------------------------------------------------------------


@dataclass(frozen=True)
class Saw:
    situation: Situation
    before_step: int


@dataclass(frozen=True)
class SetAside:
    """A situation about an object whose role a stand-in took no longer counts."""

    situation: str
    kind: str
    stand_in: str


@dataclass(frozen=True)
class Asked:
    """The monitor's verdict on one step."""

    verdict: MonitorVerdict


@dataclass(frozen=True)
class Understood:
    """A situation became a fact when the monitor blocked a step."""

    situation: str
    fact: SituationFact


@dataclass(frozen=True)
class Blamed:
    """A situation judged harmless became a fact when a step on its object failed."""

    situation: str
    fact: SituationFact
    step_description: str


@dataclass(frozen=True)
class FactAdded:
    atom: Atom


@dataclass(frozen=True)
class ConstantMade:
    """An object a precondition names became a domain constant."""

    name: str
    action: str


@dataclass(frozen=True)
class PreconditionAdded:
    action: str
    literal: Literal


@dataclass(frozen=True)
class EditSkipped:
    """An edit the domain cannot take (an action cost that names the role's object, a
    type a predicate does not accept): the run goes on without it, and says why."""

    action: str
    change: str
    reason: str


@dataclass(frozen=True)
class RoleAsked:
    """One Knowledge Acquirer question about a candidate kind."""

    candidate: str
    question: RoleQuestion


@dataclass(frozen=True)
class Chose:
    selection: Selection
    role_type: str


@dataclass(frozen=True)
class VariantAdded:
    action: str
    variant: str
    role_type: str
    new_type: str


@dataclass(frozen=True)
class Learned:
    role_type: str
    new_type: str
    variants: list[str]


@dataclass(frozen=True)
class Planned:
    """A planner call and its result (found, none, or out of time)."""

    reason: Reason
    result: PlanResult


@dataclass(frozen=True)
class StepDone:
    step: PlanStep
    description: str
    index: int


@dataclass(frozen=True)
class StepFailed:
    step: PlanStep
    description: str


@dataclass(frozen=True)
class GaveUp:
    reason: NoSolution


@dataclass(frozen=True)
class Completed:
    explanation: str


LoopEvent = (
    Saw
    | SetAside
    | Asked
    | Understood
    | Blamed
    | FactAdded
    | ConstantMade
    | PreconditionAdded
    | EditSkipped
    | RoleAsked
    | Chose
    | VariantAdded
    | Learned
    | Planned
    | StepDone
    | StepFailed
    | GaveUp
    | Completed
)
