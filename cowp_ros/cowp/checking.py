"""The loop's monitoring phase: which remaining step does a known situation block, and
what fact does that situation state?

`first_blocked_step` puts the situations to the loop's `Monitor` port, once per
situation, about every remaining step it could affect, in plan order; the monitor stops
at the first unsuitable one. A later situation is asked only about the steps before the
first block found so far, so at equal steps the earlier situation decides, and no step
past a known block is asked.

Not every pair is asked: situations the method finds moot are left out (`policies.
MootPolicy`; each is told once, as set aside), and so are the steps its guard spares
(`policies.GuardPolicy`: one whose action already carries the situation's precondition,
which is what makes the loop end, or that does not touch the object the situation was
found to be about, which keeps a small model's false alarms from blocking a stand-in).

`understand` gives the blocking situation its fact, once: the monitor's when it made
one, else the loop's `FactMaker`'s. `prepare` has a monitor that can ask what the plan's
objects will need before any situation comes.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.loop_events import Asked, SetAside, Understood
from cowp_ros.cowp.loop_state import Blocked, KnownSituation, RunState
from cowp_ros.cowp.policies import LoopPolicies
from cowp_ros.cowp.ports import FactMaker, Monitor, MonitorPreparation
from cowp_ros.cowp.repairs import Tell
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep

__all__ = ["first_blocked_step", "live_situations", "prepare", "understand"]


def prepare(
    monitor: Monitor,
    steps: Sequence[PlanStep],
    task: PlanningTask,
    cancel: CancelToken,
    tell: Tell,
) -> None:
    """Have a monitor that can (`MonitorPreparation`) ask what the plan's objects will
    need, now that the plan is made; each question is told as it was asked."""
    if not isinstance(monitor, MonitorPreparation):
        return
    cancel.check()
    for verdict in monitor.prepare(steps, task):
        tell(Asked(verdict))


def first_blocked_step(
    task: PlanningTask,
    state: RunState,
    monitor: Monitor,
    policies: LoopPolicies,
    cancel: CancelToken,
    tell: Tell,
) -> Blocked | None:
    """The first remaining step the monitor finds unsuitable in a known situation."""
    remaining = state.remaining
    focus = [arg for step in remaining for arg in step.args]
    found: Blocked | None = None
    for known in live_situations(task, state, policies, tell):
        limit = len(remaining) if found is None else found.index
        guarded = policies.guard.guarded
        indices = [i for i in range(limit) if not guarded(remaining[i], known, task)]
        if not indices:
            continue
        cancel.check()
        checked = [remaining[i] for i in indices]
        check = monitor.check(checked, known.situation, task, focus)
        for verdict in check.verdicts:
            tell(Asked(verdict))
        if check.blocked is not None:
            # The step the check names, not its last verdict's: a monitor that
            # decides once per situation asks no question per step.
            at = checked.index(check.blocked) if check.blocked in checked else -1
            index = indices[at if at >= 0 else len(check.verdicts) - 1]
            found = Blocked(index, remaining[index], known, check)
    return found


def live_situations(
    task: PlanningTask, state: RunState, policies: LoopPolicies, tell: Tell
) -> list[KnownSituation]:
    """The known situations that still count; one the moot policy sets aside now is
    marked (it stays aside) and told."""
    live = []
    for known in state.situations:
        if not known.set_aside:
            stand_in = policies.moot.replaced_by(known, task, state.remaining, state.learned)
            if stand_in is not None:
                known.set_aside = True
                tell(SetAside(known.text, stand_in.role_type, stand_in.new_type))
        if not known.set_aside:
            live.append(known)
    return live


def understand(
    blocked: Blocked,
    task: PlanningTask,
    state: RunState,
    predicates: FactMaker,
    cancel: CancelToken,
    tell: Tell,
) -> None:
    """Give the blocking situation its fact (told), unless it has one."""
    known = blocked.known
    if known.fact is not None:
        return
    fact = blocked.check.fact
    if fact is None:
        focus = [*blocked.step.args, *(a for s in state.remaining for a in s.args)]
        cancel.check()
        fact = predicates.generate(known.situation, task, focus)
    known.fact = fact
    tell(Understood(known.text, fact))
