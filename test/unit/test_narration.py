"""The loop's events in words: each typed event gives the report the kind, the line and
the data the loop has always written (reports and trial records read them)."""

from __future__ import annotations

import typing

import pytest

from cowp_ros.cowp import loop_events as ev
from cowp_ros.cowp.answers import MonitorVerdict, RoleQuestion, Selection
from cowp_ros.cowp.events import EventKind
from cowp_ros.cowp.loop_state import KnownSituation, LearnedRole, RunState
from cowp_ros.cowp.narration import entry, explanation
from cowp_ros.cowp.ports import Phase
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.language_model import Choice, YesNo
from cowp_ros.methods.paper.predicates import SituationFact
from cowp_ros.pddl import Atom, Literal
from cowp_ros.planning import PlanResult, PlanStatus, PlanStep

HOLD = PlanStep("hold_cup", ("cup_1",))
DIRTY = SituationFact("the cup is dirty", Atom("is_dirty", ("cup_1",)), "cup_1", "rules")
NO = YesNo(False, 0.2, "No")


USE_QUESTION = (
    "Task: serving water. The cup is dirty. Can the robot still use the cup for the task?"
)


def verdict(**calibrated: typing.Any) -> MonitorVerdict:
    question = calibrated.pop("question", "Is it suitable for a robot to hold the cup?")
    return MonitorVerdict(HOLD, "the cup is dirty", question, NO, False, False, **calibrated)


EXAMPLES: list[tuple[ev.LoopEvent, EventKind, str, dict[str, typing.Any]]] = [
    (
        ev.Saw(Situation("the cup is dirty", "cup_1", 0.9, "situation_detector"), 2),
        EventKind.SITUATION,
        "saw (situation_detector): the cup is dirty (before step 2)",
        {"situation": "the cup is dirty", "before_step": 2, "object": "cup_1", "confidence": 0.9},
    ),
    (
        ev.Saw(Situation("the cup is dirty", source="sim"), 3),
        EventKind.SITUATION,
        "saw: the cup is dirty (before step 3)",
        {"situation": "the cup is dirty", "before_step": 3},
    ),
    (
        ev.Saw(Situation("the cup is dirty"), 1),
        EventKind.SITUATION,
        "saw: the cup is dirty (before step 1)",
        {"situation": "the cup is dirty", "before_step": 1},
    ),
    (
        ev.SetAside("the cup is broken", "cup", "bowl"),
        EventKind.SITUATION,
        "set aside: the cup is broken: the plan no longer uses the cup (a bowl took its role)",
        {"situation": "the cup is broken", "set_aside": True},
    ),
    (
        ev.Asked(verdict()),
        EventKind.MONITOR,
        "asked: Is it suitable for a robot to hold the cup? -> No",
        verdict().to_dict(),
    ),
    (
        ev.Asked(
            verdict(
                question=USE_QUESTION,
                score=1.2,
                threshold=0.5,
                variant="use",
                judgement="the cup can no longer be used",
                confidence=0.8,
            )
        ),
        EventKind.MONITOR,
        f"asked: {USE_QUESTION} -> No; judged that the cup can no longer be used (confidence 0.80)",
        verdict(
            question=USE_QUESTION,
            score=1.2,
            threshold=0.5,
            variant="use",
            judgement="the cup can no longer be used",
            confidence=0.8,
        ).to_dict(),
    ),
    (
        ev.Understood("the cup is dirty", DIRTY),
        EventKind.PREDICATE,
        "understood: the cup is dirty as (is_dirty cup_1) by rule",
        DIRTY.to_dict(),
    ),
    (
        ev.Blamed("the cup is dirty", DIRTY, "hold the cup"),
        EventKind.PREDICATE,
        "understood: the cup is dirty as (is_dirty cup_1): hold the cup failed after it",
        DIRTY.to_dict(),
    ),
    (
        ev.FactAdded(DIRTY.atom),
        EventKind.PDDL_CHANGE,
        "added fact (is_dirty cup_1)",
        {"change": "add_fact", "fact": "(is_dirty cup_1)"},
    ),
    (
        ev.ConstantMade("table_1", "find_faucet"),
        EventKind.PDDL_CHANGE,
        "made table_1 a domain constant (named in find_faucet)",
        {"change": "promote_to_constant", "object": "table_1"},
    ),
    (
        ev.PreconditionAdded("hold_cup", Literal(Atom("is_dirty", ("?c",)), positive=False)),
        EventKind.PDDL_CHANGE,
        "added precondition (not (is_dirty ?c)) to hold_cup",
        {"change": "add_precondition", "action": "hold_cup", "literal": "(not (is_dirty ?c))"},
    ),
    (
        ev.EditSkipped("move", "add_action_variant", "its action cost names the place"),
        EventKind.PDDL_CHANGE,
        "could not copy move for the stand-in: its action cost names the place; going on "
        "without it",
        {
            "change": "add_action_variant",
            "action": "move",
            "skipped": "its action cost names the place",
        },
    ),
    (
        ev.RoleAsked(
            "mug", RoleQuestion("hold_cup", "Hold a mug?", YesNo(True, None, " Yes"), True, False)
        ),
        EventKind.ACQUIRER,
        "asked: Hold a mug? -> Yes",
        {
            "candidate": "mug",
            **RoleQuestion(
                "hold_cup", "Hold a mug?", YesNo(True, None, " Yes"), True, False
            ).to_dict(),
        },
    ),
    (
        ev.Chose(Selection("mug", "Which?", Choice(0, "mug", "mug"), "model"), "cup"),
        EventKind.SELECTION,
        "chose a mug to replace the cup (model)",
        Selection("mug", "Which?", Choice(0, "mug", "mug"), "model").to_dict(),
    ),
    (
        ev.VariantAdded("hold_cup", "hold_cup__cup_as_mug", "cup", "mug"),
        EventKind.PDDL_CHANGE,
        "added action hold_cup__cup_as_mug (a mug in the cup's role in hold_cup)",
        {
            "change": "add_action_variant",
            "action": "hold_cup",
            "variant": "hold_cup__cup_as_mug",
            "role_type": "cup",
            "new_type": "mug",
        },
    ),
    (
        ev.Learned("cup", "mug", ["hold_cup__cup_as_mug", "fill_cup__cup_as_mug"]),
        EventKind.LEARNED,
        "learned: a mug can take the cup's role (hold_cup__cup_as_mug, fill_cup__cup_as_mug)",
        {
            "role_type": "cup",
            "new_type": "mug",
            "variants": ["hold_cup__cup_as_mug", "fill_cup__cup_as_mug"],
        },
    ),
    (
        ev.StepDone(HOLD, "hold the cup", 3),
        EventKind.STEP,
        "did: hold the cup",
        {"step": "(hold_cup cup_1)", "ok": True, "index": 3},
    ),
    (
        ev.StepFailed(HOLD, "hold the cup"),
        EventKind.STEP,
        "failed: hold the cup",
        {"step": "(hold_cup cup_1)", "ok": False},
    ),
    (
        ev.Completed("completed the plan as made"),
        EventKind.OUTCOME,
        "completed: completed the plan as made",
        {"outcome": "completed"},
    ),
]


@pytest.mark.parametrize("event,kind,text,data", EXAMPLES)
def test_each_event_is_told_as_before(event, kind, text, data) -> None:
    assert entry(event) == (kind, text, data)


def test_every_kind_of_loop_event_has_an_example() -> None:
    shown = {type(example[0]) for example in EXAMPLES} | {ev.Planned, ev.GaveUp}
    assert shown == set(typing.get_args(ev.LoopEvent))


FOUND = PlanResult(PlanStatus.FOUND, "pyperplan", 0.123, (HOLD,))
EMPTY = PlanResult(PlanStatus.FOUND, "pyperplan", 0.01)
NONE = PlanResult(PlanStatus.NO_PLAN, "pyperplan", 0.01)
LATE = PlanResult(PlanStatus.TIMEOUT, "pyperplan", 60.0, detail="60 s")


@pytest.mark.parametrize(
    "reason,result,why,text",
    [
        (
            ev.Reason(ev.Why.CLOSED_WORLD),
            FOUND,
            "closed-world plan",
            "planned (closed-world plan): (hold_cup cup_1) [0.12 s]",
        ),
        (
            ev.Reason(ev.Why.STEP_FAILED, HOLD),
            EMPTY,
            "(hold_cup cup_1) failed",
            "planned ((hold_cup cup_1) failed): nothing left to do [0.01 s]",
        ),
        (
            ev.Reason(ev.Why.RAN_OUT),
            LATE,
            "the plan ran out before the goal was reached",
            "no plan in time (the plan ran out before the goal was reached): 60 s",
        ),
        (
            ev.Reason(ev.Why.FAILED_BECAUSE, HOLD, "the cup is dirty"),
            NONE,
            "(hold_cup cup_1) failed: the cup is dirty",
            "no plan ((hold_cup cup_1) failed: the cup is dirty)",
        ),
        (
            ev.Reason(ev.Why.UNSUITABLE, HOLD, "the cup is dirty"),
            NONE,
            "(hold_cup cup_1) is unsuitable: the cup is dirty",
            "no plan ((hold_cup cup_1) is unsuitable: the cup is dirty)",
        ),
        (
            ev.Reason(ev.Why.STAND_IN, new_type="mug", role_type="cup"),
            NONE,
            "with a mug as the cup",
            "no plan (with a mug as the cup)",
        ),
    ],
)
def test_a_plan_is_told_with_its_reason(reason, result, why, text) -> None:
    assert entry(ev.Planned(reason, result)) == (
        EventKind.PLAN,
        text,
        {"reason": why, **result.to_dict()},
    )


@pytest.mark.parametrize(
    "reason,text",
    [
        (
            ev.NotPlanned("unsolvable"),
            "the task has no plan even in the closed world (unsolvable)",
        ),
        (
            ev.NoStandInHelps("the water is dirty", None, "find the faucet"),
            "the water is dirty, and no stand-in can help: it is about the world, "
            "not an object of find the faucet",
        ),
        (
            ev.NoStandInHelps("the table is missing", "table", "find the faucet"),
            "the table is missing, and no stand-in can help: it is about the table, "
            "not an object of find the faucet",
        ),
        (
            ev.NoRole("the cup is dirty", "cup"),
            "the cup is dirty, and no present object could take the cup's role "
            "(no kind present is close enough to a cup to ask about)",
        ),
        (
            ev.NoRole(
                "the vacuum is broken",
                "vacuum",
                3,
                (ev.Refusal("broom", "turn on a broom"), ev.Refusal("mop")),
            ),
            "the vacuum is broken, and no present object could take the vacuum's role "
            "(a broom: not suitable to turn on a broom; a mop: not fit for the role; "
            "1 accepted kind gave no plan)",
        ),
        (
            ev.NoRole("the vacuum is broken", "vacuum", 0, (), ("towel", "bucket")),
            "the vacuum is broken, and no present object could take the vacuum's role "
            "(no action of the task lets a towel or a bucket do the vacuum's job here)",
        ),
        (
            ev.NoRole("the vacuum is broken", "vacuum", 1, (ev.Refusal("broom"),), ("towel",)),
            "the vacuum is broken, and no present object could take the vacuum's role "
            "(a broom: not fit for the role; no action of the task lets a towel do the "
            "vacuum's job here)",
        ),
        (
            ev.NoStandInHelps(
                "there is a power outage", None, "clean the area", "vacuum", ("towel", "mop", "rag")
            ),
            "there is a power outage, and no stand-in can help: no action of the task lets "
            "a towel, a mop or a rag do the vacuum's job here",
        ),
        (ev.NoRole("(find_faucet) failed", None), "(find_faucet) failed, and nothing to try"),
        (ev.PlanRanOut(), "the plan ran out before the goal was reached"),
    ],
)
def test_giving_up_says_why(reason, text) -> None:
    assert entry(ev.GaveUp(reason)) == (
        EventKind.OUTCOME,
        f"no solution: {text}",
        {"outcome": "no_solution"},
    )


def test_the_explanation_says_what_changed_the_run() -> None:
    state = RunState(remaining=[HOLD])
    assert explanation(Phase.EXECUTING, state) == "planned 1 step(s)"
    assert explanation(Phase.COMPLETED, state) == "completed the plan as made"
    state.situations.append(KnownSituation(Situation("the table is blue"), 0))
    assert (
        explanation(Phase.COMPLETED, state) == "kept the plan: judged harmless: the table is blue"
    )
    state.replans_for_situations.append("the cup is dirty")
    assert explanation(Phase.COMPLETED, state) == "changed the plan: the cup is dirty"
    state.learned.append(LearnedRole("cup", "mug", [], "the cup is dirty"))
    assert explanation(Phase.COMPLETED, state) == "used a mug instead of the cup: the cup is dirty"
    state.failure = "the plan ran out before the goal was reached"
    assert explanation(Phase.NO_SOLUTION, state) == (
        "gave up: the plan ran out before the goal was reached"
    )
