"""COWP with LLM-State in front of the monitor: situations pass through the belief.

Like `cowp.execute_with_situations` (every step succeeds; each scheduled situation is
raised when due), except that a situation first goes to the `LLMStateTracker`: the
model edits the belief, and the loop observes the belief's new sentences ("the cup is
dirty", about the object the belief names) instead of the raw text. When the model
changed nothing the raw text is observed, so a silent model never hides a situation.
After every step the outcome goes to the tracker too, so attributes can follow actions.
The belief updates (applied and refused calls) are reported as `predicate` events.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.loop import OpenWorldPlanner, Phase, ScheduledSituation
from cowp_ros.cowp.prompts import sentence
from cowp_ros.cowp.report import CowpReport
from cowp_ros.methods.llm_state.belief import (
    Belief,
    BeliefPredicates,
    LLMStateTracker,
    StateUpdate,
)
from cowp_ros.tasks.phrases import ActionPhrases


def attach_llm_state(loop: OpenWorldPlanner) -> LLMStateTracker:
    """A tracker over the loop's model whose belief starts from the loop's objects; the
    loop's predicate generator becomes the belief-aware one."""
    if loop.model is None:
        raise ValueError("LLM-State needs the loop's language model")
    tracker = LLMStateTracker(loop.model, Belief.from_task(loop.task))
    loop.predicates = BeliefPredicates(tracker, loop.model, frozenset(loop.task.predicates))
    return tracker


def _report_update(report: CowpReport, update: StateUpdate) -> None:
    for call in update.applied:
        report.add("predicate", f"belief: {call} (LLM-State)", method="llm_state", call=str(call))
    for refused in update.rejected:
        report.add(
            "predicate",
            f"belief: refused {refused.shown} ({refused.reason})",
            method="llm_state",
            refused=refused.shown,
            reason=refused.reason,
        )


def execute_with_belief(
    loop: OpenWorldPlanner,
    tracker: LLMStateTracker,
    schedule: Sequence[ScheduledSituation],
    *,
    phrases: ActionPhrases | None = None,
    max_steps: int = 200,
) -> CowpReport:
    """Plan, execute every step as succeeding, route situations through the belief."""
    if loop.phase is Phase.NOT_PLANNED:
        loop.plan()
    observed: set[str] = set()
    pending = list(schedule)
    for _ in range(max_steps):
        step = loop.next_step()
        if step is None:
            break
        due = [s for s in pending if s.due(step, len(loop.executed_steps))]
        for situation in due:
            pending.remove(situation)
            update = tracker.observe_situation(situation.text)
            _report_update(loop.report, update)
            fresh = [s for s in tracker.situations() if s not in observed]
            if not fresh:
                fresh = [situation.text]
            for text in fresh:
                observed.add(text)
                loop.observe(text)
        if due:
            continue
        described = f"{(phrases or loop.phrases).describe(step, loop.task)} {step}"
        loop.step_done(True)
        _report_update(loop.report, tracker.observe_outcome(step, True, described))
    for situation in pending:
        loop.report.add(
            "situation",
            f"never raised: {sentence(situation.text)} (its step did not come)",
            situation=situation.text,
            raised=False,
        )
    report = loop.finish_report()
    report.usage = {**report.usage, "belief": tracker.belief.to_dict()}
    return report


__all__ = ["attach_llm_state", "execute_with_belief"]
