"""The kinds of things a run tells, typed once: the report, the RunTask feedback, the CLI
narrative and the benchmark's trace all read them from here.

Each event kind carries the label the CLI prints before it and the feedback phase a
person watching the robot sees it under; each phase carries the short mark the demo
narrative prints. A new kind of event is one new member here, and every reader knows
how to show it. Both are string enums: a kind compares equal to its name and is
written into JSON as it ("plan"), so reports and feedback keep their plain-text form.
"""

from __future__ import annotations

import enum


class FeedbackPhase(enum.StrEnum):
    """Where a run is, as RunTask feedback tells it (the `phase` field)."""

    PLANNING = "planning"
    MONITORING = "monitoring"
    ACQUIRING = "acquiring"
    EXECUTING = "executing"
    DONE = "done"

    @property
    def mark(self) -> str:
        """The short mark the narrative prints, so the events line up after it."""
        return _MARKS[self]


_MARKS = {
    FeedbackPhase.PLANNING: "plan",
    FeedbackPhase.MONITORING: "check",
    FeedbackPhase.ACQUIRING: "learn",
    FeedbackPhase.EXECUTING: "do",
    FeedbackPhase.DONE: "end",
}


class EventKind(enum.StrEnum):
    """One kind of event of a run's report."""

    PLAN = "plan"  # a planner call and its result
    SITUATION = "situation"  # a situation was observed (or set aside, or never raised)
    MONITOR = "monitor"  # a Plan Monitor question and its verdict
    PREDICATE = "predicate"  # a situation turned into a fact
    PDDL_CHANGE = "pddl_change"  # an edit of the domain or problem
    ACQUIRER = "acquirer"  # a Knowledge Acquirer question and answer
    SELECTION = "selection"  # the choice among accepted stand-ins
    LEARNED = "learned"  # acquired knowledge that led to a plan
    STEP = "step"  # a plan step was executed (or failed)
    OUTCOME = "outcome"  # the run ended: completed or no_solution

    @property
    def label(self) -> str:
        """What the CLI prints before the event's text (five characters wide)."""
        return _LABELS[self]

    @property
    def phase(self) -> FeedbackPhase | None:
        """The feedback phase the event is told under; None: the phase of the moment (a
        PDDL change belongs to whatever made it), or not told as feedback at all (steps
        and the outcome are told by the task manager itself, with the robot's view)."""
        return _PHASES.get(self)

    @property
    def told_as_feedback(self) -> bool:
        """False for the events the task manager tells in its own words."""
        return self not in (EventKind.STEP, EventKind.OUTCOME)


_LABELS = {
    EventKind.PLAN: "PLAN ",
    EventKind.SITUATION: "SAW  ",
    EventKind.MONITOR: "ASK  ",
    EventKind.PREDICATE: "THINK",
    EventKind.PDDL_CHANGE: "PDDL ",
    EventKind.ACQUIRER: "ASK  ",
    EventKind.SELECTION: "PICK ",
    EventKind.LEARNED: "LEARN",
    EventKind.STEP: "DO   ",
    EventKind.OUTCOME: "END  ",
}
_PHASES = {
    EventKind.PLAN: FeedbackPhase.PLANNING,
    EventKind.SITUATION: FeedbackPhase.MONITORING,
    EventKind.MONITOR: FeedbackPhase.MONITORING,
    EventKind.PREDICATE: FeedbackPhase.MONITORING,
    EventKind.ACQUIRER: FeedbackPhase.ACQUIRING,
    EventKind.SELECTION: FeedbackPhase.ACQUIRING,
    EventKind.LEARNED: FeedbackPhase.ACQUIRING,
}
