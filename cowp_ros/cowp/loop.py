"""The COWP open-world loop (Algorithm 1) as a plain object driven by events.

The driver (`driver.drive`) runs it on a robot; by hand it reads:

    loop = build_loop("cowp", get_task("fill_cup"), model)  # methods.registry: the paper's
    loop.plan()                               # closed-world plan
    while (step := loop.next_step()) is not None:
        ...                                   # the robot is about to do `step`
        loop.observe("the cup is dirty")      # a situation arrives (any time)
        ...                                   # the robot executes loop.next_step()
        loop.step_done(success=True)
    loop.report.to_dict(); loop.explanation()

This module is the state machine alone. The loop asks the world only through the ports
it is given (`ports`): a monitor, a fact maker, an acquirer and a planner, in this
process or across the ROS graph; it builds none of them (a method's entry in
`methods.registry` does, composed by `build_loop`). What a method decides beyond its ports
(blame a failure on a situation, set a situation aside, spare a step a question) comes
in as `policies.LoopPolicies`; the PDDL edits are `repairs`; the loop tells what
happened as typed events (`loop_events`) and `narration` words them for the report.

On each situation the monitor is asked about the remaining steps, in one request per
situation. The first step found unsuitable is blocked with the situation's fact, and
the task is replanned. If no plan exists, the acquirer ranks and assesses the present
kinds of object that could take the failed object's role, one is selected, its action
variants join the domain, and the task is replanned again. When nothing is left the
outcome is `no_solution`. The cancel token is checked before every request, so a
cancelled run stops between two questions, not after the whole repair.
"""

from __future__ import annotations

from dataclasses import dataclass

from cowp_ros.cowp import narration
from cowp_ros.cowp.acquisition import agreed_actions, assess_candidates, role_of, ruled_out_by
from cowp_ros.cowp.answers import SituationFact
from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.checking import first_blocked_step, prepare, understand
from cowp_ros.cowp.loop_events import (
    Blamed,
    Chose,
    Completed,
    GaveUp,
    Learned,
    LoopEvent,
    NoRole,
    NoSolution,
    NoStandInHelps,
    NotPlanned,
    Planned,
    PlanRanOut,
    Reason,
    Saw,
    StepDone,
    StepFailed,
    Why,
)
from cowp_ros.cowp.loop_state import KnownSituation, LearnedRole, Reaction, RunState
from cowp_ros.cowp.policies import PAPER_POLICIES, LoopPolicies
from cowp_ros.cowp.ports import Acquirer, FactMaker, Monitor, Phase
from cowp_ros.cowp.repairs import add_stand_in, block_step
from cowp_ros.cowp.report import CowpReport, usage_summary
from cowp_ros.cowp.roles import held_without_release, role_actions
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import Planner, PlanResult, PlanStep
from cowp_ros.safe_text import situation_text
from cowp_ros.tasks.phrases import ActionPhrases, object_type

__all__ = [
    "CowpSettings",
    "KnownSituation",
    "LearnedRole",
    "OpenWorldPlanner",
    "Phase",
    "Reaction",
]


@dataclass(frozen=True)
class CowpSettings:
    """Knobs of the loop.

    `max_candidates`: at most this many object kinds are put to the acquirer per failed
    role (None: every kind present). `max_repairs` bounds monitor/replan rounds for one
    event; each round adds a precondition or a variant, so the loop always ends, and the
    bound only turns a pathological domain into a clear error. `prepare_monitor`: once
    the first plan is made, a monitor that can (`MonitorPreparation`) asks what the
    plan's objects will need, so that the first situation is decided sooner (`cowp run`
    with a situation to come); off, a run that meets no situation asks nothing.
    """

    planner_timeout_s: float = 60.0
    max_candidates: int | None = None
    max_repairs: int = 50
    prepare_monitor: bool = False


class OpenWorldPlanner:
    """One task run under COWP; see the module docstring for how to drive it.

    Not thread-safe: a ROS node calls it from one thread (it blocks while the model
    answers and the planner runs, seconds at most per call on these domains).
    `report.listeners` receive each event as it is recorded, for live feedback.
    """

    def __init__(
        self,
        task: PlanningTask,
        *,
        monitor: Monitor,
        acquirer: Acquirer,
        predicates: FactMaker,
        planner: Planner,
        phrases: ActionPhrases,
        description: str,
        task_name: str = "",
        settings: CowpSettings | None = None,
        policies: LoopPolicies = PAPER_POLICIES,
        model: LanguageModel | None = None,
        cancel: CancelToken = NEVER,
    ) -> None:
        """`model`, when the ports ask one in this process, names it in the report and
        counts its usage; without it the report says "remote" (the task manager's
        ports are clients of the commonsense node)."""
        self.task = task
        self.monitor, self.acquirer, self.predicates = monitor, acquirer, predicates
        self.planner = planner
        self.phrases = phrases
        self.description = description
        self.settings = settings or CowpSettings()
        self.policies = policies
        self.model = model
        self.cancel = cancel
        self._phase = Phase.NOT_PLANNED
        self.report = CowpReport(
            task=task_name or task.domain.name,
            description=description,
            planner=planner.name,
            model=getattr(model, "name", type(model).__name__) if model else "remote",
        )
        self._state = RunState()

    # ---- what a caller reads --------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Where the loop is (not planned, executing, completed, no solution)."""
        return self._phase

    @property
    def remaining_steps(self) -> tuple[PlanStep, ...]:
        """The plan from the current state on (empty when done or stuck)."""
        return tuple(self._state.remaining)

    @property
    def executed_steps(self) -> tuple[PlanStep, ...]:
        """Steps reported done, in order."""
        return tuple(self._state.executed)

    @property
    def situations(self) -> tuple[KnownSituation, ...]:
        """Situations observed so far."""
        return tuple(self._state.situations)

    @property
    def learned(self) -> tuple[LearnedRole, ...]:
        """Roles the acquirer taught the domain during this run."""
        return tuple(self._state.learned)

    def next_step(self) -> PlanStep | None:
        """The step the robot should do now, or None when completed or stuck."""
        if self._phase is not Phase.EXECUTING or not self._state.remaining:
            return None
        return self._state.remaining[0]

    def describe(self, step: PlanStep) -> str:
        """A step in English ("fill the cup with water from the faucet")."""
        return self.phrases.describe(step, self.task)

    def explanation(self) -> str:
        """One line a person reads: what the robot did and why."""
        return narration.explanation(self._phase, self._state)

    def finish_report(self) -> CowpReport:
        """Fill in the outcome, explanation and usage, and return the report."""
        self.report.outcome = self._phase.value
        self.report.explanation = self.explanation()
        usage = getattr(self.model, "usage", None)
        if usage is not None:
            self.report.usage = usage_summary(usage)
        return self.report

    # ---- events in ---------------------------------------------------------------------

    def plan(self) -> tuple[PlanStep, ...]:
        """Make the first (closed-world) plan; known situations are then checked."""
        result = self._replan(Reason(Why.CLOSED_WORLD))
        if not result.found:
            self._give_up(NotPlanned(result.detail))
            return ()
        self._phase = Phase.EXECUTING
        if self.settings.prepare_monitor:
            prepare(self.monitor, self.remaining_steps, self.task, self.cancel, self._tell)
        if self._state.situations:
            self._repair()
        self._finish_if_goal_reached()
        return self.remaining_steps

    def observe(self, situation: Situation | str) -> Reaction:
        """A situation arrives (from the camera, the simulator, a person).

        The text is checked first (`safe_text.situation_text`): escapes and control
        characters removed, at most `MAX_SITUATION_CHARS`, else a `CowpError`.
        """
        given = Situation.of(situation)
        seen = Situation(situation_text(given.text), given.object, given.confidence, given.source)
        position = len(self._state.executed)
        self._state.situations.append(KnownSituation(seen, position))
        self._tell(Saw(seen, position + 1))
        if self._phase is Phase.NOT_PLANNED:
            self.plan()
            return self._reaction(0, 0)
        if self._phase is not Phase.EXECUTING:
            return Reaction.NO_SOLUTION if self._phase is Phase.NO_SOLUTION else Reaction.FEASIBLE
        return self._repair()

    def step_done(self, success: bool = True) -> Reaction:
        """The robot finished `next_step()`; on success its effects update the state.

        A failure the policies blame on no situation replans from the unchanged state,
        so a caller that retries gets a fresh plan; a caller that knows why should call
        `observe` with the reason first.
        """
        step = self.next_step()
        if step is None:
            raise CowpError(f"no step is under way (phase: {self._phase.value})")
        if not success:
            return self._step_failed(step)
        self.task = edits.apply_action(self.task, step.action, step.args)
        self._state.failed_in_a_row = []
        self._state.executed.append(self._state.remaining.pop(0))
        self._tell(StepDone(step, self.describe(step), len(self._state.executed)))
        self._finish_if_goal_reached()
        ran_out = self._phase is Phase.EXECUTING and not self._state.remaining
        if ran_out and not self._replan(Reason(Why.RAN_OUT)).found:
            self._give_up(PlanRanOut())
            return Reaction.NO_SOLUTION
        return Reaction.FEASIBLE

    # ---- the loop ----------------------------------------------------------------------

    def _step_failed(self, step: PlanStep) -> Reaction:
        """Block the step with the situation the policies blame, else replan as is."""
        self._tell(StepFailed(step, self.describe(step)))

        def fact_for(known: KnownSituation) -> SituationFact:
            self.cancel.check()
            return self.predicates.generate(known.situation, self.task, list(step.args))

        if self._state.failed_in_a_row and self._state.failed_in_a_row[-1] != step:
            self._state.failed_in_a_row = []
        self._state.failed_in_a_row.append(step)
        failures = len(self._state.failed_in_a_row)
        blamed = self.policies.blame.blamed(step, self._state.situations, fact_for, failures)
        if blamed is None:
            if not self._replan(Reason(Why.STEP_FAILED, step)).found:
                return self._acquire_or_give_up_for(step, None)
            return self._repair() if self._state.situations else Reaction.REPLANNED
        known, fact = blamed
        known.fact = fact
        self._tell(Blamed(known.text, fact, self.describe(step)))
        self._block(step, known)
        if not self._replan(Reason(Why.FAILED_BECAUSE, step, known.text)).found:
            return self._acquire_or_give_up_for(step, known)
        return self._repair()

    def _reaction(self, learned_before: int, replans_before: int) -> Reaction:
        """What the event changed, given the learned roles and replans before it."""
        if self._phase is Phase.NO_SOLUTION:
            return Reaction.NO_SOLUTION
        if len(self._state.learned) > learned_before:
            return Reaction.ACQUIRED
        if len(self._state.replans_for_situations) > replans_before:
            return Reaction.REPLANNED
        return Reaction.FEASIBLE

    def _repair(self) -> Reaction:
        """Check the remaining steps against every known situation until the plan holds."""
        learned_before = len(self._state.learned)
        replans_before = len(self._state.replans_for_situations)
        for _ in range(self.settings.max_repairs):
            blocked = first_blocked_step(
                self.task, self._state, self.monitor, self.policies, self.cancel, self._tell
            )
            if blocked is None:
                self._finish_if_goal_reached()
                return self._reaction(learned_before, replans_before)
            understand(blocked, self.task, self._state, self.predicates, self.cancel, self._tell)
            self._block(blocked.step, blocked.known)
            reason = Reason(Why.UNSUITABLE, blocked.step, blocked.known.text)
            if self._replan(reason).found:
                continue
            if self._acquire_or_give_up_for(blocked.step, blocked.known) is Reaction.NO_SOLUTION:
                return Reaction.NO_SOLUTION
        raise CowpError(
            f"gave up after {self.settings.max_repairs} repairs for one event",
            hint="the domain keeps producing plans the monitor rejects; see the report",
        )

    def _block(self, step: PlanStep, known: KnownSituation) -> None:
        assert known.fact is not None
        self.task = block_step(self.task, step, known.fact, self._tell)
        self._state.replans_for_situations.append(known.text)

    def _acquire_or_give_up_for(self, step: PlanStep, known: KnownSituation | None) -> Reaction:
        situation = known.text if known else narration.step_failure(step)
        fact = known.fact if known else None
        world = fact is not None and fact.subject is None and self.policies.world_stand_ins
        if fact is not None and fact.subject not in step.args and not world:
            # The precondition that blocks the step names no parameter of it ("(not
            # (water_is_dirty))", "(not (is_missing table_1))" on find_faucet): every
            # stand-in's copy of the action keeps it verbatim, so no stand-in can help.
            # Asking Prompt 2 about every object present would only cost calls.
            about = None if fact.subject is None else object_type(fact.subject, self.task)
            self._give_up(NoStandInHelps(situation, about, self.describe(step)))
            return Reaction.NO_SOLUTION
        role_type = role_of(self.task, step, fact)
        tried_before = len(self._state.tried_types.get(role_type or "", ()))
        if role_type is not None and self._acquire(step, role_type, situation):
            return Reaction.ACQUIRED
        asked = len(self._state.tried_types.get(role_type or "", ()))
        ruled_out = ruled_out_by(self.acquirer, role_type)
        if world and asked == tried_before:
            # No kind present can do the job without what the world took away.
            self._give_up(
                NoStandInHelps(situation, None, self.describe(step), role_type, ruled_out)
            )
            return Reaction.NO_SOLUTION
        refused = tuple(self._state.refused.get(role_type or "", ()))
        held = held_without_release(self.task, fact.subject if fact else None)
        self._give_up(NoRole(situation, role_type, asked, refused, ruled_out, held))
        return Reaction.NO_SOLUTION

    def _acquire(self, step: PlanStep, role_type: str, situation: str) -> bool:
        """Knowledge acquisition for the role `step` cannot fill; True once a plan exists."""
        plan_order = [step.action, *(s.action for s in self._state.remaining)]
        actions = role_actions(self.task, role_type, plan_order)
        accepted = assess_candidates(
            self.acquirer,
            self.task,
            role_type,
            actions,
            tried=self._state.tried_types.setdefault(role_type, set()),
            refused=self._state.refused.setdefault(role_type, []),
            description=self.description,
            max_candidates=self.settings.max_candidates,
            cancel=self.cancel,
            tell=self._tell,
        )
        while accepted:
            self.cancel.check()
            selection = self.acquirer.select(accepted, role_type, self.description, situation)
            self._tell(Chose(selection, role_type))
            chosen = selection.chosen
            agreed = agreed_actions(accepted, chosen, actions)
            self.task, variants = add_stand_in(self.task, agreed, role_type, chosen, self._tell)
            if self._replan(Reason(Why.STAND_IN, new_type=chosen, role_type=role_type)).found:
                self._state.learned.append(LearnedRole(role_type, chosen, variants, situation))
                self._tell(Learned(role_type, chosen, variants))
                return True
            accepted = [a for a in accepted if a.candidate_type != chosen]
        return False

    def _replan(self, reason: Reason) -> PlanResult:
        self.cancel.check()
        result = self.planner.solve(self.task, self.settings.planner_timeout_s)
        if result.found:
            self._state.remaining = list(result.steps)
        self._tell(Planned(reason, result))
        return result

    def _tell(self, event: LoopEvent) -> None:
        narration.record(self.report, event)

    def _give_up(self, reason: NoSolution) -> None:
        self._phase = Phase.NO_SOLUTION
        self._state.remaining = []
        self._state.failure = narration.failure_text(reason)
        self._tell(GaveUp(reason))

    def _finish_if_goal_reached(self) -> None:
        if self._phase is not Phase.EXECUTING:
            return
        if self.task.goal_atoms <= self.task.init_atoms:
            self._phase = Phase.COMPLETED
            self._state.remaining = []
            self._tell(Completed(self.explanation()))
