"""The loop's knowledge acquisition phase, up to the accepted stand-ins.

When no plan exists because a step's object is unusable, `role_of` says whose role
needs filling, and `assess_candidates` puts the present kinds of object to the loop's
`Acquirer` port: in the order it ranks them (at most `max_candidates`), each kind not
tried before for the role, until the acquirer says the accepted ones are enough. Each
question is told as it is answered. The loop then selects among the accepted kinds,
adds the chosen one's action variants (`repairs.add_stand_in`) and replans.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cowp_ros.cowp.answers import ROLE_ACTION, CandidateAssessment, SituationFact
from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.loop_events import Refusal, RoleAsked
from cowp_ros.cowp.ports import Acquirer, DomainRuling
from cowp_ros.cowp.repairs import Tell
from cowp_ros.cowp.roles import candidate_types
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep

__all__ = ["agreed_actions", "assess_candidates", "refusal_of", "role_of", "ruled_out_by"]

_SUITABLE_TO = re.compile(r"\bfor an? robot to (.+?)\?*$", re.IGNORECASE)


def role_of(task: PlanningTask, step: PlanStep, fact: SituationFact | None) -> str | None:
    """The parameter type whose role a stand-in should fill for `step`: that of the
    fact's object when the step uses it, else of its first argument (None: no argument)."""
    if not step.args:
        return None
    subject = fact.subject if fact else None
    role_object = subject if subject in step.args else step.args[0]
    return task.parameter_types(step.action)[step.args.index(role_object)]


def assess_candidates(
    acquirer: Acquirer,
    task: PlanningTask,
    role_type: str,
    actions: Sequence[str],
    *,
    tried: set[str],
    description: str,
    max_candidates: int | None,
    cancel: CancelToken,
    tell: Tell,
    refused: list[Refusal] | None = None,
) -> list[CandidateAssessment]:
    """The assessments the acquirer accepted, in the order asked; every kind asked about
    joins `tried`, so a later acquisition for the role asks about the others, and every
    kind refused joins `refused`, with what it was refused for (for the explanation)."""
    candidates = candidate_types(task, role_type, exclude=sorted(tried))
    candidates = acquirer.rank(task, role_type, candidates, description)
    if max_candidates is not None:
        candidates = candidates[:max_candidates]
    accepted: list[CandidateAssessment] = []
    for candidate_type, example in candidates:
        cancel.check()
        tried.add(candidate_type)
        assessment = acquirer.assess(task, role_type, actions, candidate_type, example, description)
        for question in assessment.questions:
            tell(RoleAsked(candidate_type, question))
        if assessment.accepted:
            accepted.append(assessment)
            if acquirer.enough(accepted):
                break
        elif refused is not None:
            refused.append(refusal_of(assessment))
    return accepted


def agreed_actions(
    accepted: Sequence[CandidateAssessment], chosen: str, actions: Sequence[str]
) -> list[str]:
    """The role's actions the chosen kind was found suitable for, in `actions`' order:
    its copies are made of these only. An acquirer that asked about every action (COWP's)
    gets them all; one that asked only about the actions a plan with the kind uses (the
    grounded method's) does not teach the domain to plug in a broom. An assessment with
    no action question (a kind selected without one) keeps every action."""
    assessment = next((a for a in accepted if a.candidate_type == chosen), None)
    asked = (
        set()
        if assessment is None
        else {q.action for q in assessment.questions if q.action != ROLE_ACTION}
    )
    return [a for a in actions if a in asked] or list(actions)


def refusal_of(assessment: CandidateAssessment) -> Refusal:
    """What a refused kind was refused for: the first unsuitable question's action, in
    its own words ("Is it suitable for a robot to turn on a broom?": "turn on a
    broom"), or the role itself."""
    first = next((q for q in assessment.questions if not q.suitable), None)
    if first is None:
        return Refusal(assessment.candidate_type)
    if first.action == ROLE_ACTION:
        return Refusal(assessment.candidate_type, cut_off=first.cut_off)
    words = _SUITABLE_TO.search(first.question.strip())
    doing = words.group(1).strip() if words else first.action.replace("_", " ")
    return Refusal(assessment.candidate_type, doing, first.cut_off)


def ruled_out_by(acquirer: Acquirer, role_type: str | None) -> tuple[str, ...]:
    """The close kinds `acquirer` found no plan for in the role, for the explanation of
    "no stand-in" (only an acquirer that tries kinds in the domain first knows them)."""
    if role_type is None or not isinstance(acquirer, DomainRuling):
        return ()
    return acquirer.ruled_out(role_type)
