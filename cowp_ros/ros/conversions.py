"""The core's types <-> cowp_interfaces messages, each pair written once, side by side.

A node fills a response from the core's answer; its client rebuilds the same answer
from that response. Both directions live here, next to each other, so a field added to
a message is added to both in one place (the round-trip tests check that nothing is
lost on the way).

- `PlanStep` <-> `msg/PlanStep`
- `Situation` <-> `msg/Situation`
- `TaskContext` (name, description, phrases, PDDL) <-> the task fields of `CheckPlan`
  and `AcquireKnowledge` requests
- `PlanCheck` (verdicts, blocked step, fact) <-> a `CheckPlan` response
- `CandidateAssessment`, `Selection` <-> an `AcquireKnowledge` response
- `PlanResult` <-> a `Plan` response
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cowp_interfaces.msg import PlanStep as PlanStepMsg
from cowp_interfaces.msg import Situation as SituationMsg
from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.cowp.answers import (
    CandidateAssessment,
    MonitorVerdict,
    PlanCheck,
    RoleQuestion,
    Selection,
)
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Choice, Usage, YesNo
from cowp_ros.methods.paper.predicates import SituationFact
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.identifiers import check_identifier
from cowp_ros.planning import PlannerError, PlanResult, PlanStatus, PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

# ---- plan steps -----------------------------------------------------------------------


def step_to_msg(step: PlanStep) -> PlanStepMsg:
    return PlanStepMsg(action=step.action, arguments=list(step.args))


def step_from_msg(message: PlanStepMsg) -> PlanStep:
    return PlanStep(message.action, tuple(message.arguments))


def steps_to_msgs(steps: Iterable[PlanStep]) -> list[PlanStepMsg]:
    return [step_to_msg(step) for step in steps]


def steps_from_msgs(messages: Iterable[PlanStepMsg]) -> list[PlanStep]:
    return [step_from_msg(message) for message in messages]


# ---- situations -----------------------------------------------------------------------


def situation_to_msg(situation: Situation) -> SituationMsg:
    confidence = 1.0 if situation.confidence is None else situation.confidence
    return SituationMsg(
        text=situation.text,
        object=situation.object,
        source=situation.source,
        confidence=float(confidence),
    )


def situation_from_msg(message: SituationMsg) -> Situation:
    """The message's situation, tidied and capped (`Situation.of`)."""
    confidence = float(message.confidence)
    return Situation.of(
        Situation(
            message.text,
            message.object,
            confidence if math.isfinite(confidence) else None,
            message.source,
        )
    )


# ---- what a reasoning request is about ------------------------------------------------


@dataclass(frozen=True)
class TaskContext:
    """What one reasoning request is about: the task, in words and in PDDL."""

    name: str
    description: str
    phrases: ActionPhrases
    task: PlanningTask


def put_task_words(request: Any, name: str, description: str, phrases: ActionPhrases) -> None:
    """Fill a request's task name, description and phrase rules (no PDDL)."""
    request.task = name
    request.task_description = description
    request.phrase_actions = list(phrases.phrases)
    request.phrase_templates = list(phrases.phrases.values())


def put_task_context(request: Any, context: TaskContext) -> None:
    """Fill a `CheckPlan` / `AcquireKnowledge` request's task fields, PDDL included."""
    put_task_words(request, context.name, context.description, context.phrases)
    request.domain_pddl = context.task.domain_text()
    request.problem_pddl = context.task.problem_text()


def task_context_from_request(request: Any) -> TaskContext:
    """The request's task; the registry is read only for what the request leaves out."""
    actions, templates = list(request.phrase_actions), list(request.phrase_templates)
    if len(actions) != len(templates):
        raise CowpError("phrase_actions and phrase_templates must have the same length")
    description = request.task_description
    phrases = ActionPhrases(dict(zip(actions, templates, strict=True))) if actions else None
    needs_registry = not description or phrases is None or not request.domain_pddl
    spec = get_task(request.task) if needs_registry else None
    if request.domain_pddl:
        task = PlanningTask.from_text(request.domain_pddl, request.problem_pddl, "request")
    else:
        assert spec is not None
        task = spec.load()
    if spec is not None:
        description = description or spec.description
        phrases = phrases or ActionPhrases(spec.phrases)
    assert phrases is not None
    return TaskContext(request.task, description, phrases, task)


# ---- the Plan Monitor: CheckPlan ------------------------------------------------------


def check_request(
    context: TaskContext,
    steps: Sequence[PlanStep],
    situation: Situation,
    focus: Sequence[str] = (),
) -> CheckPlan.Request:
    request = CheckPlan.Request(
        steps=steps_to_msgs(steps),
        situation=situation.text,
        situation_object=situation.object,
        situation_source=situation.source,
        focus_objects=list(focus),
    )
    put_task_context(request, context)
    return request


def situation_from_check_request(request: CheckPlan.Request) -> Situation:
    return Situation.of(
        Situation(request.situation, request.situation_object, None, request.situation_source)
    )


def _p_yes_field(answer: YesNo) -> float:
    return -1.0 if answer.p_yes is None else float(answer.p_yes)


def _yes_no(text: str, p_yes: float, suitable: bool, unclear: bool, cached: bool) -> YesNo:
    """A YesNo rebuilt from response fields (-1 means no log-probabilities)."""
    return YesNo(
        answer=None if unclear else suitable,
        p_yes=None if p_yes < 0 or not math.isfinite(p_yes) else float(p_yes),
        text=text,
        cached=cached,
    )


def put_plan_check(
    response: CheckPlan.Response, check: PlanCheck, steps: Sequence[PlanStep]
) -> None:
    """Fill a CheckPlan response (success is the caller's) from the monitor's decision."""
    response.feasible = check.blocked is None
    response.failing_step = -1 if check.blocked is None else _index(steps, check.blocked)
    response.reason = check.reason
    response.threshold = math.nan
    for verdict in check.verdicts:
        response.questions.append(verdict.question)
        response.question_steps.append(_index(steps, verdict.step))
        response.answers.append(verdict.answer.text)
        response.p_yes.append(_p_yes_field(verdict.answer))
        response.unclear.append(verdict.unclear)
        response.cached.append(verdict.answer.cached)
        response.scores.append(math.nan if verdict.score is None else verdict.score)
        response.thresholds.append(math.nan if verdict.threshold is None else verdict.threshold)
        response.variants.append(verdict.variant or "")
        response.suitable.append(verdict.suitable)
        response.judgements.append(verdict.judgement)
        response.confidences.append(math.nan if verdict.confidence is None else verdict.confidence)
        if verdict.threshold is not None:
            response.threshold, response.variant = verdict.threshold, verdict.variant or ""
    if check.fact is not None:
        put_fact(response, check.fact)


def _index(steps: Sequence[PlanStep], step: PlanStep) -> int:
    """Where `step` is in `steps`; a monitor that names a step it was not given is a bug."""
    try:
        return list(steps).index(step)
    except ValueError:
        raise CowpError(f"the monitor named {step}, a step it was not asked about") from None


def put_fact(response: CheckPlan.Response, fact: SituationFact) -> None:
    response.predicate = str(fact.atom)
    response.predicate_subject = fact.subject or ""
    response.predicate_source = fact.source
    response.predicate_note = fact.note


def plan_check_from_response(
    response: CheckPlan.Response, steps: Sequence[PlanStep], situation: Situation
) -> PlanCheck:
    """The monitor's decision, as the node made it (the PDDL names re-checked)."""
    count = len(response.questions)
    if any(
        len(field) != count
        for field in (
            response.answers,
            response.p_yes,
            response.unclear,
            response.cached,
            response.question_steps,
        )
    ) or any(not 0 <= int(i) < len(steps) for i in response.question_steps):
        raise CowpError("the plan monitor's response does not match the steps it was asked")
    blocked_at = int(response.failing_step)
    if not response.feasible and not 0 <= blocked_at < len(steps):
        raise CowpError("the plan monitor blocked a step it did not ask about")
    calibrated = not math.isnan(response.threshold)
    # Per-answer verdicts, thresholds and kinds where the node sent them (a decision of
    # several kinds of question); else every answer at the blocked step is unsuitable.
    each = all(
        len(field) == count for field in (response.thresholds, response.variants, response.suitable)
    )
    said = all(len(field) == count for field in (response.judgements, response.confidences))
    verdicts = []
    for index in range(count):
        at = int(response.question_steps[index])
        unsuitable = not response.feasible and at == blocked_at
        score = float(response.scores[index]) if index < len(response.scores) else math.nan
        has_score = calibrated and not math.isnan(score)
        threshold, variant = float(response.threshold), response.variant
        if each:
            unsuitable = not response.suitable[index]
            threshold, variant = float(response.thresholds[index]), response.variants[index]
            has_score = not math.isnan(score) and not math.isnan(threshold)
        verdicts.append(
            MonitorVerdict(
                steps[at],
                situation.text,
                response.questions[index],
                _yes_no(
                    response.answers[index],
                    float(response.p_yes[index]),
                    not unsuitable,
                    bool(response.unclear[index]),
                    bool(response.cached[index]),
                ),
                not unsuitable,
                bool(response.unclear[index]),
                score=score if has_score else None,
                threshold=threshold if has_score else None,
                variant=variant if has_score else None,
                judgement=str(response.judgements[index]) if said else "",
                confidence=_finite(float(response.confidences[index])) if said else None,
            )
        )
    blocked = None if response.feasible else steps[blocked_at]
    fact = fact_from_response(response, situation) if response.predicate.strip() else None
    return PlanCheck(tuple(verdicts), blocked, fact, reason=response.reason)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def fact_from_response(response: CheckPlan.Response, situation: Situation) -> SituationFact:
    """The node's fact; every name in it passes the identifier grammar again here, since
    the process that receives it edits the PDDL."""
    words = response.predicate.strip().strip("()").split()
    if not words:
        raise CowpError(f"the plan monitor gave no predicate for {situation.text!r}")
    atom = Atom(
        check_identifier(words[0], "predicate"),
        tuple(check_identifier(word, "object") for word in words[1:]),
    )
    subject = response.predicate_subject or None
    if subject is not None:
        check_identifier(subject, "object")
    return SituationFact(
        situation.text, atom, subject, response.predicate_source, response.predicate_note
    )


# ---- the Knowledge Acquirer: AcquireKnowledge ------------------------------------------


def put_assessment(response: AcquireKnowledge.Response, assessment: CandidateAssessment) -> None:
    for q in assessment.questions:
        response.question_candidates.append(assessment.candidate_type)
        response.question_actions.append(q.action)
        response.questions.append(q.question)
        response.answers.append(q.answer.text)
        response.p_yes.append(_p_yes_field(q.answer))
        response.suitable.append(q.suitable)
        response.unclear.append(q.unclear)
        response.cached.append(q.answer.cached)
        response.thresholds.append(-1.0 if q.threshold is None else q.threshold)


def assessment_from_response(
    response: AcquireKnowledge.Response, candidate_type: str, example_object: str
) -> CandidateAssessment:
    """The questions the node asked about `candidate_type`, as the acquirer's answer."""
    assessment = CandidateAssessment(candidate_type, example_object)
    for index, question in enumerate(response.questions):
        if response.question_candidates and response.question_candidates[index] != candidate_type:
            continue
        suitable, unclear = bool(response.suitable[index]), bool(response.unclear[index])
        answer = _yes_no(
            response.answers[index],
            float(response.p_yes[index]),
            suitable,
            unclear,
            bool(response.cached[index]),
        )
        threshold = float(response.thresholds[index]) if index < len(response.thresholds) else -1.0
        if threshold >= 0 and not unclear:
            # P(yes) decided, so the verdict is not the model's word: keep the word, or a
            # "Yes" that fell short of the threshold would read as a "No"
            answer = replace(answer, answer=_said_yes(answer.text, answer.answer))
        assessment.questions.append(
            RoleQuestion(
                response.question_actions[index],
                question,
                answer,
                suitable,
                unclear,
                None if threshold < 0 else round(threshold, 4),  # float32 on the wire
            )
        )
    return assessment


def _said_yes(text: str, otherwise: bool | None) -> bool | None:
    """The yes or no an answer's text starts with (`otherwise` when neither)."""
    word = text.strip().lower()
    if word.startswith("yes"):
        return True
    if word.startswith("no"):
        return False
    return otherwise


def put_selection(response: AcquireKnowledge.Response, selection: Selection) -> None:
    response.chosen, response.how = selection.chosen, selection.how
    response.selection_question = selection.question or ""
    response.selection_answer = selection.answer.text if selection.answer else ""


def selection_from_response(
    response: AcquireKnowledge.Response, offered: Sequence[str]
) -> Selection:
    chosen = response.chosen
    if chosen not in offered:
        raise CowpError(f"the knowledge acquirer chose {chosen!r}, not a candidate")
    answer = None
    if response.selection_question:
        answer = Choice(list(offered).index(chosen), chosen, response.selection_answer)
    return Selection(chosen, response.selection_question or None, answer, response.how)


# ---- the planner: Plan -----------------------------------------------------------------


def put_plan_result(response: Plan.Response, result: PlanResult) -> None:
    response.planner = result.planner
    response.success = result.found
    response.status = result.status.value
    response.steps = steps_to_msgs(result.steps)
    response.planning_time_s = float(result.seconds)
    response.message = result.detail


PLANNER_BUSY = "the planner is busy"
"""How the planner node's refusal of a request past its limit begins (status `error`):
the caller may try again when a slot frees (`planner_busy`)."""


def planner_busy(response: Plan.Response) -> bool:
    """The planner node refused the request only because every slot was taken."""
    return response.status == "error" and response.message.startswith(PLANNER_BUSY)


def plan_result_from_response(response: Plan.Response, planner: str) -> PlanResult:
    if response.status == "error":
        raise PlannerError(f"the planner node failed: {response.message}")
    try:
        status = PlanStatus(response.status)
    except ValueError as err:
        raise PlannerError(f"the planner node answered status {response.status!r}") from err
    return PlanResult(
        status=status,
        planner=response.planner or planner,
        seconds=float(response.planning_time_s),
        steps=tuple(steps_from_msgs(response.steps)),
        detail=response.message,
    )


# --- the model's usage, per commonsense request ------------------------------------------


def put_usage(response: Any, model: str, before: Usage, after: Usage) -> None:
    """What answering this request cost: `after` minus `before` (the node answers one
    request at a time, so the difference is this request's)."""
    response.model = model
    response.model_calls = after.calls - before.calls
    response.prompt_tokens = after.prompt_tokens - before.prompt_tokens
    response.completion_tokens = after.completion_tokens - before.completion_tokens
    response.cache_hits = after.cache_hits - before.cache_hits
    response.model_seconds = float(max(0.0, after.seconds - before.seconds))


def usage_from_response(response: Any) -> tuple[str, Usage]:
    """The model that answered a commonsense request, and what it cost."""
    seconds = float(response.model_seconds)
    return str(response.model), Usage(
        calls=max(0, int(response.model_calls)),
        prompt_tokens=max(0, int(response.prompt_tokens)),
        completion_tokens=max(0, int(response.completion_tokens)),
        cache_hits=max(0, int(response.cache_hits)),
        seconds=seconds if math.isfinite(seconds) and seconds > 0 else 0.0,
    )
