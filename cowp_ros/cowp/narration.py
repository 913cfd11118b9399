"""The open-world loop's story in words: typed loop events -> the report's events.

The loop tells what happened (`loop_events`); this module says it: `entry` gives each
event's kind, the one line a person reads ("asked: Is it suitable ...? -> No") and the
JSON data behind it, and `record` adds that to the run's report, where the CLI, the
RunTask feedback and the benchmark's trace read it. `explanation` is the run's one-line
summary. Every sentence of the loop is here, so changing how a run reads touches no
decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cowp_ros.cowp.answers import ROLE_ACTION, MonitorVerdict, RoleQuestion
from cowp_ros.cowp.events import EventKind
from cowp_ros.cowp.loop_events import (
    Asked,
    Blamed,
    Chose,
    Completed,
    ConstantMade,
    EditSkipped,
    FactAdded,
    GaveUp,
    Learned,
    LoopEvent,
    NoRole,
    NoSolution,
    NoStandInHelps,
    NotPlanned,
    Planned,
    PlanRanOut,
    PreconditionAdded,
    Reason,
    Refusal,
    RoleAsked,
    Saw,
    SetAside,
    StepDone,
    StepFailed,
    Understood,
    VariantAdded,
    Why,
)
from cowp_ros.cowp.loop_state import RunState
from cowp_ros.cowp.ports import Phase
from cowp_ros.cowp.report import CowpReport, Event
from cowp_ros.cowp.wording import sentence
from cowp_ros.planning import PlanStatus, PlanStep
from cowp_ros.tasks.phrases import noun

__all__ = [
    "entry",
    "explanation",
    "failure_text",
    "monitor_event_text",
    "reason_text",
    "record",
    "step_failure",
]

Entry = tuple[EventKind, str, dict[str, Any]]


def record(report: CowpReport, event: LoopEvent) -> Event:
    """Add `event` to `report`, told in words (its listeners see it at once)."""
    kind, text, data = entry(event)
    return report.add(kind, text, **data)


# Sources not named in the story: scripted situations that stand in for a perception
# the run does not have (a sim scenario's events, `cowp run`'s schedule, the
# benchmark's world), and "" for a source that gave no name.
UNNAMED_SOURCES = frozenset({"", "sim", "schedule", "world"})


def _by(source: str) -> str:
    """` (situation_detector)`: who saw it, where a person reading the story should know
    (a camera's detector, an operator, a replayed bag)."""
    return "" if source in UNNAMED_SOURCES else f" ({source})"


def entry(event: LoopEvent) -> Entry:
    """The report's kind, line and data for one loop event."""
    match event:
        case Saw(situation, before):
            about: dict[str, Any] = {"object": situation.object} if situation.object else {}
            if situation.confidence is not None:
                about["confidence"] = situation.confidence
            return (
                EventKind.SITUATION,
                f"saw{_by(situation.source)}: {sentence(situation.text)} (before step {before})",
                {"situation": situation.text, "before_step": before, **about},
            )
        case SetAside(situation, kind, stand_in):
            return (
                EventKind.SITUATION,
                f"set aside: {sentence(situation)}: the plan no longer uses {noun(kind)} "
                f"({noun(stand_in, 'a')} took its role)",
                {"situation": situation, "set_aside": True},
            )
        case Asked(verdict):
            return EventKind.MONITOR, monitor_event_text(verdict), verdict.to_dict()
        case Understood(situation, fact):
            note = f" ({fact.note})" if fact.note else ""
            how = _HOW.get(fact.source, fact.source)
            return (
                EventKind.PREDICATE,
                f"understood: {sentence(situation)} as {fact.atom} {how}{note}",
                fact.to_dict(),
            )
        case Blamed(situation, fact, step_description):
            return (
                EventKind.PREDICATE,
                f"understood: {sentence(situation)} as {fact.atom}: {step_description} "
                "failed after it",
                fact.to_dict(),
            )
        case _:
            return _change_entry(event)


_SKIPPED = {
    "add_action_variant": "copy {action} for the stand-in",
    "add_precondition": "add the situation's precondition to {action}",
}

_HOW = {
    "rules": "by rule",
    "model": "by the model",
    "world": "about the world",
    "source": "as its source said",
}


def _change_entry(event: LoopEvent) -> Entry:
    """PDDL changes and knowledge acquisition."""
    match event:
        case FactAdded(atom):
            return (
                EventKind.PDDL_CHANGE,
                f"added fact {atom}",
                {"change": "add_fact", "fact": str(atom)},
            )
        case ConstantMade(name, action):
            return (
                EventKind.PDDL_CHANGE,
                f"made {name} a domain constant (named in {action})",
                {"change": "promote_to_constant", "object": name},
            )
        case PreconditionAdded(action, literal):
            return (
                EventKind.PDDL_CHANGE,
                f"added precondition {literal} to {action}",
                {"change": "add_precondition", "action": action, "literal": str(literal)},
            )
        case EditSkipped(action, change, reason):
            what = _SKIPPED.get(change, change.replace("_", " ")).format(action=action)
            return (
                EventKind.PDDL_CHANGE,
                f"could not {what}: {reason}; going on without it",
                {"change": change, "action": action, "skipped": reason},
            )
        case RoleAsked(candidate, question):
            return (
                EventKind.ACQUIRER,
                f"asked: {question.question} -> {_role_answer_text(question)}",
                {"candidate": candidate, **question.to_dict()},
            )
        case Chose(selection, role_type):
            return (
                EventKind.SELECTION,
                f"chose {noun(selection.chosen, 'a')} to replace {noun(role_type)} "
                f"({selection.how})",
                selection.to_dict(),
            )
        case VariantAdded(action, variant, role_type, new_type):
            return (
                EventKind.PDDL_CHANGE,
                f"added action {variant} ({noun(new_type, 'a')} in "
                f"{noun(role_type)}'s role in {action})",
                {
                    "change": "add_action_variant",
                    "action": action,
                    "variant": variant,
                    "role_type": role_type,
                    "new_type": new_type,
                },
            )
        case Learned(role_type, new_type, variants):
            return (
                EventKind.LEARNED,
                f"learned: {noun(new_type, 'a')} can take {noun(role_type)}'s "
                f"role ({', '.join(variants)})",
                {"role_type": role_type, "new_type": new_type, "variants": variants},
            )
        case _:
            return _run_entry(event)


def _role_answer_text(question: RoleQuestion) -> str:
    """The answer as said, with the cut-off where P(yes) decided ("Yes (P 0.898, needs
    0.90): not fit for the role"): a "Yes" that was not enough must not read as a yes."""
    said = question.answer.text.strip() or "?"
    if not question.cut_off:
        return said
    said = f"{said} ({question.cut_off})"
    if question.suitable:
        return said
    return f"{said}: {'not fit for the role' if question.action == ROLE_ACTION else 'not suitable'}"


def _run_entry(event: LoopEvent) -> Entry:
    """Plans, steps and the outcome."""
    match event:
        case Planned(reason, result):
            why = reason_text(reason)
            if result.found:
                steps = ", ".join(str(s) for s in result.steps) or "nothing left to do"
                text = f"planned ({why}): {steps} [{result.seconds:.2f} s]"
                if "still goes back to" in result.detail:  # said by the tidier
                    text += f" ({result.detail.rsplit('; ', 1)[-1].rstrip(')')})"
            elif result.status is PlanStatus.TIMEOUT:
                text = f"no plan in time ({why}): {result.detail}"
            else:
                text = f"no plan ({why})"
            return EventKind.PLAN, text, {"reason": why, **result.to_dict()}
        case StepDone(step, description, index):
            return (
                EventKind.STEP,
                f"did: {description}",
                {"step": str(step), "ok": True, "index": index},
            )
        case StepFailed(step, description):
            return EventKind.STEP, f"failed: {description}", {"step": str(step), "ok": False}
        case GaveUp(no_solution):
            return (
                EventKind.OUTCOME,
                f"no solution: {failure_text(no_solution)}",
                {"outcome": "no_solution"},
            )
        case Completed(summary):
            return EventKind.OUTCOME, f"completed: {summary}", {"outcome": "completed"}
    raise TypeError(f"not a loop event: {event!r}")


def reason_text(reason: Reason) -> str:
    """Why the planner was called, in words (the plan event's `reason`)."""
    situation = sentence(reason.situation)
    match reason.why:
        case Why.CLOSED_WORLD:
            return "closed-world plan"
        case Why.STEP_FAILED:
            return f"{reason.step} failed"
        case Why.RAN_OUT:
            return "the plan ran out before the goal was reached"
        case Why.FAILED_BECAUSE:
            return f"{reason.step} failed: {situation}"
        case Why.UNSUITABLE:
            return f"{reason.step} is unsuitable: {situation}"
        case Why.STAND_IN:
            return f"with {noun(reason.new_type, 'a')} as {noun(reason.role_type)}"


def step_failure(step: PlanStep) -> str:
    """A failed step as the situation its acquisition is for ("(hold_cup cup_1) failed")."""
    return f"{step} failed"


def failure_text(reason: NoSolution) -> str:
    """Why the run has no solution, in words (after "no solution:" and "gave up:")."""
    match reason:
        case NotPlanned(detail):
            return f"the task has no plan even in the closed world ({detail})"
        case NoStandInHelps(situation, about_kind, step_description, role_type, ruled_out):
            if role_type is not None and ruled_out:
                return (
                    f"{sentence(situation)}, and no stand-in can help: "
                    f"{_no_action_text(role_type, ruled_out)}"
                )
            about = "the world" if about_kind is None else noun(about_kind)
            return (
                f"{sentence(situation)}, and no stand-in can help: it is about {about}, "
                f"not an object of {step_description}"
            )
        case NoRole(situation, role_type, asked, refused, ruled_out, held):
            if role_type is None:
                return f"{sentence(situation)}, and nothing to try"
            why = _refusals_text(role_type, asked, refused, ruled_out)
            return (
                f"{sentence(situation)}, and no present object could take "
                f"{noun(role_type)}'s role{why}" + (f": {held}" if held else "")
            )
        case PlanRanOut():
            return "the plan ran out before the goal was reached"


def _no_action_text(role_type: str, kinds: Sequence[str]) -> str:
    """What the domain lacks for the kinds it ruled out: "no action of the task lets a
    towel or a bucket do the vacuum's job here"."""
    names = [noun(kind, "a") for kind in kinds]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"no action of the task lets {listed} do {noun(role_type)}'s job here"


def _refusals_text(
    role_type: str, asked: int, refused: Sequence[Refusal], ruled_out: Sequence[str] = ()
) -> str:
    """Why no stand-in, in the task's terms: what each kind asked about was refused for
    (" (a broom: not suitable to turn on a broom)"), what the domain lacks for the close
    kinds it ruled out before any question, or that none was close enough."""
    if asked == 0:
        if ruled_out:
            return f" ({_no_action_text(role_type, ruled_out)})"
        return f" (no kind present is close enough to {noun(role_type, 'a')} to ask about)"
    said = [
        (
            f"{noun(r.candidate_type, 'a')}: not suitable to {r.doing}"
            if r.doing
            else f"{noun(r.candidate_type, 'a')}: not fit for the role"
        )
        + (f" ({r.cut_off})" if r.cut_off else "")
        for r in refused
    ]
    others = asked - len(refused)
    if others > 0:
        said.append(f"{others} accepted kind{'s' if others != 1 else ''} gave no plan")
    if ruled_out:
        said.append(_no_action_text(role_type, ruled_out))
    return f" ({'; '.join(said)})" if said else ""


def explanation(phase: Phase, state: RunState) -> str:
    """One line a person reads: what the robot did and why."""
    if phase is Phase.NO_SOLUTION:
        return f"gave up: {state.failure}"
    if state.learned:
        last = state.learned[-1]
        return (
            f"used {noun(last.new_type, 'a')} instead of {noun(last.role_type)}: "
            f"{sentence(last.situation)}"
        )
    if state.replans_for_situations:
        return f"changed the plan: {sentence(state.replans_for_situations[-1])}"
    if state.situations:
        seen = "; ".join(sentence(s.text) for s in state.situations)
        return f"kept the plan: judged harmless: {seen}"
    if phase is Phase.COMPLETED:
        return "completed the plan as made"
    return f"planned {len(state.remaining)} step(s)"


def monitor_event_text(verdict: MonitorVerdict) -> str:
    """ "asked: Q -> answer", with the decision in words when a threshold made it.

    A scored answer can be judged the blocking way although the model's word pointed
    the other (its score passed the threshold), so the line says what was judged, with
    the model's own probability for that judgement ("judged that the cup can no longer
    be used (confidence 0.87)"): in the monitor's own words where it gave them (only it
    knows what its question asks and which answer blocks), else about the step; the
    score, threshold and variant that decided are in the report beside the answer
    (`MonitorVerdict.to_dict`).
    """
    marks = " (unclear answer)" if verdict.unclear else ""
    text = f"asked: {verdict.question} -> {verdict.answer.text.strip() or '?'}{marks}"
    if verdict.judgement:
        confidence = verdict.confidence
        sure = f" (confidence {confidence:.2f})" if confidence is not None else ""
        return f"{text}; judged that {verdict.judgement}{sure}"
    if verdict.score is None or verdict.threshold is None:
        return text
    # A calibrated Prompt 1 ("is it suitable ...?"): "yes" is the harmless answer.
    p_yes = verdict.answer.p_yes
    sure = (
        f" (confidence {p_yes if verdict.suitable else 1.0 - p_yes:.2f})"
        if p_yes is not None
        else ""
    )
    return f"{text}; judged that {_step_judgement(verdict)}{sure}"


def _step_judgement(verdict: MonitorVerdict) -> str:
    """What a calibrated verdict about a step means, in words."""
    if verdict.suitable:
        return f"the robot can still do {verdict.step}"
    return f"the robot should not do {verdict.step}"
