"""The ports of the open-world loop: what it asks of the world, declared once.

The loop (`loop.OpenWorldPlanner`) and the driver (`driver.drive`) depend on these
protocols and nothing else. Each has several implementations, checked against the
protocol by the type checker:

- `Monitor`: the grounded method's `methods.grounded.situation_monitor.GroundedMonitor`
  and the paper's `methods.paper.monitor.PlanMonitor` in one process; the commonsense
  node's client (`cowp_ros.ros.clients.commonsense_client.CommonsenseClient`) over ROS 2.
- `FactMaker`: `methods.grounded.grounding.GroundedFacts`,
  `methods.paper.predicates.PredicateGenerator`; the commonsense client; LLM-State's
  `methods.llm_state.belief.BeliefPredicates`.
- `Acquirer`: `methods.grounded.frugal_acquirer.FrugalAcquirer`,
  `methods.paper.acquirer.KnowledgeAcquirer`; the commonsense client.
- `Planner`: pyperplan, Fast Downward, LLM-guided search (`cowp_ros.planning`); the
  planner node's client.
- `Robot`: `schedule.ScheduledRobot` (`cowp run`, tests); the task manager's robot over
  the executor node; the benchmark's simulated world.
- `TaskLoop`: `loop.OpenWorldPlanner`; LLM-State's `methods.llm_state.loop.BeliefLoop`;
  DKPROMPT's `methods.dkprompt.loop.DKPromptLoop`.

A new robot, a new reasoner or a new method is a new class that satisfies one of these;
the loop and the driver do not change.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from cowp_ros.cowp.answers import (
    CandidateAssessment,
    MonitorVerdict,
    PlanCheck,
    Selection,
    SituationFact,
)
from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.report import CowpReport
from cowp_ros.cowp.situation import Situation
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, PlanStep

__all__ = [
    "Acquirer",
    "FactMaker",
    "Monitor",
    "Phase",
    "PlanCheck",
    "Planner",
    "Robot",
    "StepOutcome",
    "TaskLoop",
]


class Monitor(Protocol):
    """Is each step still suitable, given the situation? (COWP's Prompt 1)"""

    def check(
        self,
        steps: Sequence[PlanStep],
        situation: Situation,
        task: PlanningTask,
        focus: Sequence[str] = (),
    ) -> PlanCheck:
        """Check `steps` in order against `situation`, stopping at the first unsuitable.

        `focus` lists the objects the plan uses, in plan order: a monitor that also makes
        the fact prefers them when the sentence names only a kind ("the cup").
        """
        ...


class FactMaker(Protocol):
    """Situation sentence -> a fact over the domain's objects ("(is_dirty cup_1)")."""

    def generate(
        self, situation: Situation, task: PlanningTask, focus: Sequence[str] = ()
    ) -> SituationFact:
        """The fact for `situation`; `focus` lists objects to prefer (the failing step's
        first), for sentences that name only a kind of object."""
        ...


class Acquirer(Protocol):
    """Which present objects can take a failed object's role? (Prompts 2 and 3)

    The loop asks `rank` for the order in which to try the candidate kinds, `assess`
    for each in turn until `enough` says the accepted ones suffice, and `select` for the
    one to use. COWP's acquirer keeps the order and assesses every kind; a frugal one
    puts the likeliest first and stops at the first it accepts.
    """

    def rank(
        self,
        task: PlanningTask,
        role_type: str,
        candidates: Sequence[tuple[str, str]],
        task_description: str,
    ) -> list[tuple[str, str]]:
        """The (kind, example object) candidates in the order to try them."""
        ...

    def enough(self, accepted: Sequence[CandidateAssessment]) -> bool:
        """True when the kinds accepted so far suffice (the rest are not asked about)."""
        ...

    def assess(
        self,
        task: PlanningTask,
        role_type: str,
        actions: Sequence[str],
        candidate_type: str,
        example_object: str,
        task_description: str = "",
    ) -> CandidateAssessment:
        """The questions about one candidate kind, and whether it was accepted. With no
        `task_description` the role question is not asked, only one per action: the
        caller already knows the kind can fill the role (the domain says so)."""
        ...

    def select(
        self,
        accepted: Sequence[CandidateAssessment],
        role_type: str,
        task_description: str,
        situation: str,
    ) -> Selection:
        """The most suitable of the accepted kinds."""
        ...


@runtime_checkable
class DomainRuling(Protocol):
    """An acquirer that tried kinds in the domain before asking about them can say which
    close kinds the domain ruled out for a role (no plan with them in it), so that
    "no stand-in" names what is missing instead of only what was refused."""

    def ruled_out(self, role_type: str) -> tuple[str, ...]:
        """The kinds, closest first, left out of the last ranking for `role_type`
        because no plan has them in the role."""
        ...


@runtime_checkable
class MonitorPreparation(Protocol):
    """A monitor with questions that depend on the plan but not on any situation (does
    the task need this object clean?) can ask them when the plan is made, so that a
    situation later costs only its own questions: the robot is still moving then, and
    the model is idle. The loop asks for it where its settings say so
    (`CowpSettings.prepare_monitor`)."""

    def prepare(self, steps: Sequence[PlanStep], task: PlanningTask) -> tuple[MonitorVerdict, ...]:
        """Ask now what the plan's objects will need; the verdicts of the questions asked
        (none for what is known already)."""
        ...


@dataclass(frozen=True)
class StepOutcome:
    """What the robot reports after it was asked to do one step.

    `executed`: the step was done (its effects hold now). `situations`: what the robot
    saw instead of doing it; a step interrupted by a situation is neither done nor a
    failure, the loop decides what to do about what was seen. `reason`: why a step
    failed, in words a person reads. `stop`: the robot can go on no more (the world
    ended the run: a simulated episode that is over, an emergency stop); the driver
    ends the run at once, without telling the loop about the step.
    """

    executed: bool
    situations: tuple[Situation, ...] = field(default_factory=tuple)
    reason: str = ""
    stop: bool = False


class Robot(Protocol):
    """The robot (real, simulated or scripted) the driver runs a plan on."""

    def perceive(self, next_step: PlanStep) -> Sequence[Situation]:
        """What the robot has noticed since it was last asked, as it is about to do
        `next_step` (the camera's detector, a scenario, a person on a topic)."""
        ...

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        """Do one step ("fill the cup with water from the faucet" is `description`);
        return as soon as `cancel` is set, with the step not done."""
        ...


class Phase(enum.Enum):
    """Where a task loop is."""

    NOT_PLANNED = "not_planned"
    EXECUTING = "executing"  # a plan is there; next_step() gives the step to do
    COMPLETED = "completed"  # every step done, goal reached
    NO_SOLUTION = "no_solution"  # no plan and nothing left to learn


class TaskLoop(Protocol):
    """What the driver drives: COWP's loop or a related method's."""

    report: CowpReport

    @property
    def phase(self) -> Phase: ...

    def plan(self) -> object:
        """Make the first plan."""
        ...

    def next_step(self) -> PlanStep | None:
        """The step to do now; None when the run is over (completed or stuck)."""
        ...

    def observe(self, situation: Situation | str) -> object:
        """A situation arrived; the loop checks its plan against it."""
        ...

    def step_done(self, success: bool = True) -> object:
        """The step `next_step()` gave was done (or failed)."""
        ...

    def describe(self, step: PlanStep) -> str:
        """A step in English."""
        ...

    def explanation(self) -> str:
        """One line a person reads: what the robot did and why."""
        ...

    def finish_report(self) -> CowpReport:
        """The report, with the outcome and the explanation filled in."""
        ...
