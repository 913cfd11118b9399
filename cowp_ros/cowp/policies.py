"""What a method decides inside the open-world loop, handed to the loop as strategies.

The loop (`loop.OpenWorldPlanner`) is the same state machine for every method; three
questions it cannot answer alone go to its `LoopPolicies`:

- **blame**: a step failed. Was a situation judged harmless the cause? The paper's
  method only replans (`NoBlame`); a method may take the failure as the evidence the
  judgement lacked (the grounded method's `methods/grounded/policies.py`).
- **moot**: does a situation still count? After a bowl took the dirty cup's role, "the
  cup is broken" changes nothing (`SetAsideReplacedKinds`).
- **guard**: can a step be left out of a situation's question? A step whose action
  already carries the situation's precondition, or that does not touch the object the
  situation was found to be about, is not asked (`GuardByFact`).

`PAPER_POLICIES` is the paper's COWP and the loop's default; a method with another rule
passes its own strategies (the grounded method's are `methods/grounded/policies.py`);
the loop does not change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from cowp_ros.cowp.answers import SituationFact
from cowp_ros.cowp.loop_state import KnownSituation, LearnedRole
from cowp_ros.cowp.situation import Situation
from cowp_ros.cowp.wording import mentioned_kind
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import object_type

__all__ = [
    "PAPER_POLICIES",
    "BlamePolicy",
    "GuardByFact",
    "GuardPolicy",
    "LoopPolicies",
    "MootPolicy",
    "NoBlame",
    "SetAsideReplacedKinds",
]

FactFor = Callable[[KnownSituation], SituationFact]
"""The fact of a situation, focused on the failed step's objects (asks the fact maker)."""


class BlamePolicy(Protocol):
    def blamed(
        self,
        step: PlanStep,
        situations: Sequence[KnownSituation],
        fact_for: FactFor,
        failures: int = 1,
    ) -> tuple[KnownSituation, SituationFact] | None:
        """The situation to blame for `step`'s failure and its fact; None: just replan.
        `failures`: how often the step has failed in a row, this time included."""
        ...


class MootPolicy(Protocol):
    def replaced_by(
        self,
        known: KnownSituation,
        task: PlanningTask,
        remaining: Sequence[PlanStep],
        learned: Sequence[LearnedRole],
    ) -> LearnedRole | None:
        """The learned stand-in that makes `known` moot (it is set aside), else None."""
        ...


class GuardPolicy(Protocol):
    def guarded(self, step: PlanStep, known: KnownSituation, task: PlanningTask) -> bool:
        """True when the monitor need not be asked about `step` in `known`."""
        ...


@dataclass(frozen=True)
class LoopPolicies:
    """A method's answers to the loop's three questions (see the module docstring).

    `world_stand_ins`: when a situation about the world blocks a step and no plan is
    left, look for a stand-in in the step's role all the same (its copies of the step's
    action keep the situation's precondition, so only a kind the role's other actions
    let do the job can help: a broom sweeping in a power outage). Off, the loop gives
    up at once: an acquirer that puts every kind present to the model would ask about
    all of them for nothing.
    """

    blame: BlamePolicy
    moot: MootPolicy
    guard: GuardPolicy
    world_stand_ins: bool = False


class NoBlame:
    """A failed step blames nothing: the loop replans from the unchanged state."""

    def blamed(
        self,
        step: PlanStep,
        situations: Sequence[KnownSituation],
        fact_for: FactFor,
        failures: int = 1,
    ) -> tuple[KnownSituation, SituationFact] | None:
        return None


class SetAsideReplacedKinds:
    """A new situation about a kind of object the plan gave up for a stand-in is moot.

    After a bowl took the dirty cup's role, "the cup is broken" changes nothing, but a
    small model still finds "hold the bowl, if the cup is broken" unsuitable. Only kinds
    replaced by acquired knowledge and used by no remaining step are set aside; a
    situation the monitor already blocked on keeps its precondition.
    """

    def replaced_by(
        self,
        known: KnownSituation,
        task: PlanningTask,
        remaining: Sequence[PlanStep],
        learned: Sequence[LearnedRole],
    ) -> LearnedRole | None:
        if known.fact is not None:
            return None
        kind = kind_of(known.situation, task)
        stand_in = None if kind is None else {r.role_type: r for r in learned}.get(kind)
        if stand_in is None:
            return None
        if any(object_type(arg, task) == kind for step in remaining for arg in step.args):
            return None
        return stand_in


def kind_of(situation: Situation, task: PlanningTask) -> str | None:
    """The kind of object a situation is about: its source's word when it gave one,
    else the first object or kind the sentence names."""
    if situation.object:
        if situation.object in task.objects:
            return task.objects[situation.object]
        if situation.object in task.types:
            return situation.object
    return mentioned_kind(situation.text, task)


class GuardByFact:
    """A step is not asked about once the situation's fact shows it cannot matter.

    Before its first block a situation may concern any step (the monitor decides which:
    "the sink is not found" blocks find_faucet). Once it has a fact about an object,
    only steps that use that object are at risk; a world fact (no object) stays relevant
    to every step. A step whose action already carries the fact's precondition is not
    asked again: that is what makes the loop end (each action and situation pair is
    blocked once).
    """

    def guarded(self, step: PlanStep, known: KnownSituation, task: PlanningTask) -> bool:
        if known.fact is None:
            return False
        subject = known.fact.subject
        if subject is not None and subject not in step.args:
            return True
        predicate = known.fact.atom.predicate
        return any(
            not lit.positive and lit.atom.predicate == predicate
            for lit in edits.precondition_literals(task, step.action)
        )


PAPER_POLICIES = LoopPolicies(blame=NoBlame(), moot=SetAsideReplacedKinds(), guard=GuardByFact())
"""The paper's COWP: a failed step only replans."""
