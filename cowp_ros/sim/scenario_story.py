"""What a scenario should tell, as rules a scripted model can follow.

Each shipped task has a sim scenario with one blocking situation and one harmless one
(`blocks:` on each event), the outcome it expects and, when one should be found, the
stand-in (`stand_in:`). The scenario tests (offline, and on the sim graph) answer the
model's questions by these rules, so the story is decided by the stack, not by what a
small model happens to say: the blocking situation's use question is answered "no",
the harmless one's "yes", a dirt question "no", a role question "yes" only for the
stand-in's kind.
"""

from __future__ import annotations

import re

from cowp_ros.pddl import PlanningTask
from cowp_ros.sim.scenario import Scenario
from cowp_ros.tasks.phrases import object_type

Rule = tuple[str, bool]


def answer_rules(scenario: Scenario, task: PlanningTask) -> list[Rule]:
    """(pattern on the question, P(yes) > 0.5) pairs, first match wins; others: yes."""
    rules: list[Rule] = [
        (pattern, False)
        for event in scenario.events
        if event.blocks
        for pattern in (
            re.escape(f"if {event.situation}"),  # COWP's Prompt 1: "..., if <situation>?"
            # the grounded method's use question: "<Situation>. Can the robot still use ..."
            # (matched without regard to case: the question starts the sentence upper-case)
            re.escape(_clause(event.situation)) + r"\. Can the robot still use\b",
        )
    ]
    # the grounded method's dirt question: no (each story's blocking situation is
    # decided by its use question, whatever its words)
    rules.append((r"\bIs [\w ]+ dirty\?$", False))
    if scenario.stand_in:
        kind = object_type(scenario.stand_in, task).replace("_", " ")
        rules.append((rf"Can an? (?!{re.escape(kind)}\b)[\w ]+ be used instead", False))
    else:
        rules.append((r"be used instead", False))
    return rules


def _clause(situation: str) -> str:
    """The situation as the questions word it: one space between words, no full stop
    (the words of `methods.grounded.questions.told`, which sits above sim/ in the code
    map; matched without regard to case)."""
    return " ".join(situation.split()).rstrip(".!?")


def no_patterns(scenario: Scenario, task: PlanningTask) -> list[str]:
    """The patterns a `SensibleModel` answers "no" to."""
    return [pattern for pattern, yes in answer_rules(scenario, task) if not yes]
