"""COWP with LLM-State in front of the monitor: situations pass through the belief.

`BeliefLoop` is a task loop the driver runs like COWP's own: a situation first goes to
the `LLMStateTracker`, the model edits the belief, and COWP observes the belief's new
sentences ("the cup is dirty", about the object the belief names) instead of the raw
text. When the model changed nothing the raw text is observed, so a silent model never
hides a situation. Step outcomes go to the tracker too (failures always; successes when
`tell_successes`, so attributes can follow actions), and every belief update (applied
and refused calls) is reported as a `predicate` event.
"""

from __future__ import annotations

from cowp_ros.cowp.events import EventKind
from cowp_ros.cowp.loop import OpenWorldPlanner, Reaction
from cowp_ros.cowp.ports import Phase
from cowp_ros.cowp.report import CowpReport
from cowp_ros.cowp.situation import Situation
from cowp_ros.methods.llm_state.belief import (
    Belief,
    BeliefPredicates,
    LLMStateTracker,
    StateUpdate,
)
from cowp_ros.planning import PlanStep


def attach_llm_state(loop: OpenWorldPlanner) -> LLMStateTracker:
    """A tracker over the loop's model whose belief starts from the loop's objects; the
    loop's predicate generator becomes the belief-aware one."""
    if loop.model is None:
        raise ValueError("LLM-State needs the loop's language model")
    tracker = LLMStateTracker(loop.model, Belief.from_task(loop.task))
    loop.predicates = BeliefPredicates(tracker, loop.model, frozenset(loop.task.predicates))
    return tracker


def report_update(report: CowpReport, update: StateUpdate) -> None:
    """The belief's applied and refused calls, as `predicate` events."""
    for call in update.applied:
        report.add(
            EventKind.PREDICATE, f"belief: {call} (LLM-State)", method="llm_state", call=str(call)
        )
    for refused in update.rejected:
        report.add(
            EventKind.PREDICATE,
            f"belief: refused {refused.shown} ({refused.reason})",
            method="llm_state",
            refused=refused.shown,
            reason=refused.reason,
        )


class BeliefLoop:
    """COWP's loop seen through an LLM-kept object belief (a `TaskLoop`)."""

    def __init__(self, loop: OpenWorldPlanner, *, tell_successes: bool = True) -> None:
        self.loop = loop
        self.tracker = attach_llm_state(loop)
        self.report = loop.report
        self.tell_successes = tell_successes
        self._observed: set[str] = set()

    @property
    def phase(self) -> Phase:
        return self.loop.phase

    def plan(self) -> tuple[PlanStep, ...]:
        return self.loop.plan()

    def next_step(self) -> PlanStep | None:
        return self.loop.next_step()

    def describe(self, step: PlanStep) -> str:
        return self.loop.describe(step)

    def explanation(self) -> str:
        return self.loop.explanation()

    def observe(self, situation: Situation | str) -> Reaction:
        """The situation goes to the belief; COWP observes what the belief says now."""
        seen = Situation.of(situation)
        report_update(self.report, self.tracker.observe_situation(seen.text))
        fresh = [s for s in self.tracker.situations() if s not in self._observed]
        said: list[Situation] = [Situation(text) for text in fresh] or [seen]
        reaction = Reaction.FEASIBLE
        for sentence in said:
            self._observed.add(sentence.text)
            reaction = self.loop.observe(sentence)
        return reaction

    def step_done(self, success: bool = True) -> Reaction:
        step = self.loop.next_step()
        described = f"{self.loop.describe(step)} {step}" if step is not None else ""
        if not success and step is not None:
            report_update(self.report, self.tracker.observe_outcome(step, False, described))
        reaction = self.loop.step_done(success)
        if success and self.tell_successes and step is not None:
            report_update(self.report, self.tracker.observe_outcome(step, True, described))
        return reaction

    def finish_report(self) -> CowpReport:
        """COWP's report, with the belief as it ended under `usage["belief"]`."""
        report = self.loop.finish_report()
        report.usage = {**report.usage, "belief": self.tracker.belief.to_dict()}
        return report


__all__ = ["BeliefLoop", "attach_llm_state", "report_update"]
