"""The COWP open-world loop (Algorithm 1) as a plain object driven by events.

The driver (`driver.drive`) runs it on a robot; by hand it reads:

    loop = OpenWorldPlanner.for_task(get_task("fill_cup"), model)
    loop.plan()                               # closed-world plan
    while (step := loop.next_step()) is not None:
        ...                                   # the robot is about to do `step`
        loop.observe("the cup is dirty")      # a situation arrives (any time)
        ...                                   # the robot executes loop.next_step()
        loop.step_done(success=True)
    loop.report.to_dict(); loop.explanation()

The loop asks the world only through its ports (`ports`): a monitor, a fact maker, an
acquirer and a planner, in this process or across the ROS graph. On each situation the
Plan Monitor asks Prompt 1 about the remaining steps, in one request per situation. The
first step found unsuitable gets the situation's predicate, negated, as a precondition,
the state gets the situation's fact, and the task is replanned. If no plan exists, the
Knowledge Acquirer asks which present objects could take the failed object's role
(Prompt 2), the model picks one (Prompt 3), that object kind's action variants join the
domain, and the task is replanned again. When nothing is left the outcome is
`no_solution`. Every question, answer, PDDL change and plan lands in `report`. The
cancel token is checked before every request, so a cancelled run stops between two
questions, not after the whole repair.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from cowp_ros.cowp.acquirer import (
    CandidateAssessment,
    KnowledgeAcquirer,
    candidate_types,
    role_actions,
)
from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.events import EventKind
from cowp_ros.cowp.monitor import MonitorVerdict, PlanMonitor
from cowp_ros.cowp.ports import Acquirer, FactMaker, Monitor, Phase, PlanCheck
from cowp_ros.cowp.predicates import PredicateGenerator, SituationFact, mentioned_kind
from cowp_ros.cowp.prompts import sentence
from cowp_ros.cowp.report import CowpReport
from cowp_ros.cowp.run_report import usage_summary
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import Atom, Literal, PlanningTask, edits
from cowp_ros.planning import Planner, PlanResult, PlanStatus, PlanStep, make_planner
from cowp_ros.safe_text import situation_text
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases, noun, object_type

__all__ = [
    "CowpSettings",
    "KnownSituation",
    "LearnedRole",
    "OpenWorldPlanner",
    "Phase",
    "Reaction",
    "monitor_event_text",
]


class Reaction(enum.Enum):
    """What `observe` (or `step_done`) did about an event."""

    FEASIBLE = "feasible"  # the plan still holds; nothing changed
    REPLANNED = "replanned"  # preconditions added, a new plan found
    ACQUIRED = "acquired"  # knowledge acquired (action variants), a new plan found
    NO_SOLUTION = "no_solution"

    @property
    def text(self) -> str:
        """What the reaction means for the robot, in words (RunTask feedback)."""
        return _REACTION_TEXT[self]


_REACTION_TEXT = {
    Reaction.FEASIBLE: "the plan still works: keeping it",
    Reaction.REPLANNED: "changed the plan",
    Reaction.ACQUIRED: "changed the plan with what was learned",
    Reaction.NO_SOLUTION: "no plan is left",
}


def monitor_event_text(verdict: MonitorVerdict) -> str:
    """ "asked: Q -> answer", with the decision in words when a calibrated score made it.

    A calibrated monitor can judge a step unsuitable although the model's word was
    "Yes" (its score passed the threshold), so the line says what was judged, with the
    model's own probability for that judgement ("judged that the cup can no longer be
    used (confidence 0.87)"); the score, threshold and variant that decided are in the
    report beside the answer (`MonitorVerdict.to_dict`).
    """
    marks = " (unclear answer)" if verdict.unclear else ""
    text = f"asked: {verdict.question} -> {verdict.answer.text.strip() or '?'}{marks}"
    if verdict.score is None or verdict.threshold is None:
        return text
    p_yes = verdict.answer.p_yes
    confidence = (
        f" (confidence {p_yes if verdict.suitable else 1.0 - p_yes:.2f})"
        if p_yes is not None
        else ""
    )
    return f"{text}; judged that {_judgement(verdict)}{confidence}"


_USED_OBJECT = re.compile(r"^Can the robot still use (.+?) for ")


def _judgement(verdict: MonitorVerdict) -> str:
    """What a calibrated verdict means, in words."""
    if verdict.variant == "world question":
        return "the task can go on" if verdict.suitable else "the task cannot go on"
    used = _USED_OBJECT.match(verdict.question)
    if used is not None:
        thing = used.group(1)
        return (
            f"{thing} can still be used" if verdict.suitable else f"{thing} can no longer be used"
        )
    if verdict.suitable:
        return f"the robot can still do {verdict.step}"
    return f"the robot should not do {verdict.step}"


@dataclass(frozen=True)
class CowpSettings:
    """Knobs of the loop.

    `max_candidates`: at most this many object kinds are put to the acquirer per failed
    role (None: every kind present). `max_repairs` bounds monitor/replan rounds for one
    event; each round adds a precondition or a variant, so the loop always ends, and the
    bound only turns a pathological domain into a clear error.
    """

    planner_timeout_s: float = 60.0
    max_candidates: int | None = None
    max_repairs: int = 50
    blame_failures: bool = False
    """A step that fails after a situation about one of its objects was judged harmless
    blames that situation: the failure is the evidence the judgement lacked,
    so the step is blocked with the situation's fact (no question) and the loop
    replans. COWP (the paper's method) keeps it off: it only replans."""


@dataclass
class KnownSituation:
    """A situation observed during the run, and its fact once the monitor needed one."""

    situation: Situation
    observed_before_step: int
    fact: SituationFact | None = None
    set_aside: bool = False  # about an object whose role a stand-in took (see _moot)

    @property
    def text(self) -> str:
        return self.situation.text


@dataclass
class LearnedRole:
    """Acquired knowledge: `new_type` can take `role_type`'s role in `actions`."""

    role_type: str
    new_type: str
    actions: list[str]
    situation: str


@dataclass
class _RunState:
    remaining: list[PlanStep] = field(default_factory=list)
    executed: list[PlanStep] = field(default_factory=list)
    situations: list[KnownSituation] = field(default_factory=list)
    learned: list[LearnedRole] = field(default_factory=list)
    replans_for_situations: list[str] = field(default_factory=list)
    tried_types: dict[str, set[str]] = field(default_factory=dict)
    failure: str = ""


@dataclass(frozen=True)
class _Blocked:
    """The first remaining step a known situation blocks, and the check that said so."""

    index: int
    step: PlanStep
    known: KnownSituation
    check: PlanCheck


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
        model: LanguageModel | None,
        planner: Planner,
        phrases: ActionPhrases,
        description: str,
        task_name: str = "",
        settings: CowpSettings | None = None,
        predicates: FactMaker | None = None,
        monitor: Monitor | None = None,
        acquirer: Acquirer | None = None,
        cancel: CancelToken = NEVER,
    ) -> None:
        """`model` asks every question unless `monitor`, `acquirer` and `predicates` are
        given: the ROS task manager passes clients of the commonsense node."""
        if model is None and (monitor is None or acquirer is None or predicates is None):
            raise CowpError("without a model, give the monitor, acquirer and predicates")
        self.task = task
        self.model = model
        self.planner = planner
        self.phrases = phrases
        self.description = description
        self.settings = settings or CowpSettings()
        self.cancel = cancel
        self.monitor: Monitor = monitor or PlanMonitor(_required(model), phrases)
        self.acquirer: Acquirer = acquirer or KnowledgeAcquirer(_required(model), phrases)
        self.predicates: FactMaker = predicates or PredicateGenerator(
            model, reserved=frozenset(task.predicates)
        )
        self._phase = Phase.NOT_PLANNED
        self.report = CowpReport(
            task=task_name or task.domain.name,
            description=description,
            planner=planner.name,
            model=getattr(model, "name", type(model).__name__) if model else "remote",
        )
        self._state = _RunState()

    @classmethod
    def for_task(
        cls,
        spec: TaskSpec,
        model: LanguageModel,
        planner: Planner | None = None,
        *,
        problem: PlanningTask | None = None,
        settings: CowpSettings | None = None,
        cancel: CancelToken = NEVER,
    ) -> OpenWorldPlanner:
        """A loop for a registered task (`problem`: e.g. one from `spec.build_problem`)."""
        return cls(
            problem or spec.load(),
            model=model,
            planner=planner or make_planner("pyperplan"),
            phrases=ActionPhrases(spec.phrases),
            description=spec.description,
            task_name=spec.name,
            settings=settings,
            cancel=cancel,
        )

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

    # ---- events in ---------------------------------------------------------------------

    def plan(self) -> tuple[PlanStep, ...]:
        """Make the first (closed-world) plan; known situations are then checked."""
        result = self._replan("closed-world plan")
        if not result.found:
            self._give_up(f"the task has no plan even in the closed world ({result.detail})")
            return ()
        self._phase = Phase.EXECUTING
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
        about: dict[str, object] = {"object": seen.object} if seen.object else {}
        if seen.confidence is not None:
            about["confidence"] = seen.confidence
        self.report.add(
            EventKind.SITUATION,
            f"saw: {sentence(seen.text)} (before step {position + 1})",
            situation=seen.text,
            before_step=position + 1,
            **about,
        )
        if self._phase is Phase.NOT_PLANNED:
            self.plan()
            return self._reaction_since(0)
        if self._phase is not Phase.EXECUTING:
            return Reaction.NO_SOLUTION if self._phase is Phase.NO_SOLUTION else Reaction.FEASIBLE
        return self._repair()

    def step_done(self, success: bool = True) -> Reaction:
        """The robot finished `next_step()`; on success its effects update the state.

        A failure without a situation to explain it replans from the unchanged state,
        so a caller that retries gets a fresh plan; a caller that knows why should call
        `observe` with the reason first.
        """
        step = self.next_step()
        if step is None:
            raise CowpError(f"no step is under way (phase: {self._phase.value})")
        if not success:
            self.report.add(
                EventKind.STEP, f"failed: {self.describe(step)}", step=str(step), ok=False
            )
            blamed = self._blamed_for(step) if self.settings.blame_failures else None
            if blamed is not None:
                return self._repair_blamed(step, blamed)
            result = self._replan(f"{step} failed")
            if not result.found:
                return self._acquire_or_give_up_for(step, None)
            return self._repair() if self._state.situations else Reaction.REPLANNED
        self.task = edits.apply_action(self.task, step.action, step.args)
        self._state.executed.append(self._state.remaining.pop(0))
        self.report.add(
            EventKind.STEP,
            f"did: {self.describe(step)}",
            step=str(step),
            ok=True,
            index=len(self._state.executed),
        )
        self._finish_if_goal_reached()
        ran_out = self._phase is Phase.EXECUTING and not self._state.remaining
        if ran_out and not self._replan("the plan ran out before the goal was reached").found:
            self._give_up("the plan ran out before the goal was reached")
            return Reaction.NO_SOLUTION
        return Reaction.FEASIBLE

    # ---- the outcome -------------------------------------------------------------------

    def explanation(self) -> str:
        """One line a person reads: what the robot did and why."""
        state = self._state
        if self._phase is Phase.NO_SOLUTION:
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
        if self._phase is Phase.COMPLETED:
            return "completed the plan as made"
        return f"planned {len(state.remaining)} step(s)"

    def finish_report(self) -> CowpReport:
        """Fill in the outcome, explanation and usage, and return the report."""
        self.report.outcome = self._phase.value
        self.report.explanation = self.explanation()
        usage = getattr(self.model, "usage", None)
        if usage is not None:
            self.report.usage = usage_summary(usage)
        return self.report

    # ---- the loop ----------------------------------------------------------------------

    def _blamed_for(self, step: PlanStep) -> KnownSituation | None:
        """The latest situation judged harmless whose fact is about an object of the
        failed `step` (None when there is none): "the plate is not found", seen while
        the robot looked for the cupboard, is blamed when taking the plate out fails."""
        for known in reversed(self._state.situations):
            if known.fact is not None or known.set_aside:
                continue
            self.cancel.check()
            fact = self.predicates.generate(known.situation, self.task, list(step.args))
            if fact.subject is not None and fact.subject in step.args:
                known.fact = fact
                self.report.add(
                    EventKind.PREDICATE,
                    f"understood: {sentence(known.text)} as {fact.atom}: {self.describe(step)} "
                    "failed after it",
                    **fact.to_dict(),
                )
                return known
        return None

    def _repair_blamed(self, step: PlanStep, known: KnownSituation) -> Reaction:
        """Block `step` with the blamed situation's fact, then replan and repair."""
        assert known.fact is not None
        self._block(step, known.fact)
        self._state.replans_for_situations.append(known.text)
        result = self._replan(f"{step} failed: {sentence(known.text)}")
        if not result.found:
            return self._acquire_or_give_up_for(step, known)
        return self._repair()

    def _reaction_since(self, replans_before: int) -> Reaction:
        if self._phase is Phase.NO_SOLUTION:
            return Reaction.NO_SOLUTION
        if self._state.learned:
            return Reaction.ACQUIRED
        if len(self._state.replans_for_situations) > replans_before:
            return Reaction.REPLANNED
        return Reaction.FEASIBLE

    def _repair(self) -> Reaction:
        """Check the remaining steps against every known situation until the plan holds."""
        learned_before = len(self._state.learned)
        replans_before = len(self._state.replans_for_situations)
        for _ in range(self.settings.max_repairs):
            blocked = self._first_blocked_step()
            if blocked is None:
                self._finish_if_goal_reached()
                if len(self._state.learned) > learned_before:
                    return Reaction.ACQUIRED
                if len(self._state.replans_for_situations) > replans_before:
                    return Reaction.REPLANNED
                return Reaction.FEASIBLE
            fact = self._fact_for(blocked)
            self._block(blocked.step, fact)
            self._state.replans_for_situations.append(blocked.known.text)
            result = self._replan(f"{blocked.step} is unsuitable: {sentence(blocked.known.text)}")
            if result.found:
                continue
            if self._acquire_or_give_up_for(blocked.step, blocked.known) is Reaction.NO_SOLUTION:
                return Reaction.NO_SOLUTION
        raise CowpError(
            f"gave up after {self.settings.max_repairs} repairs for one event",
            hint="the domain keeps producing plans the monitor rejects; see the report",
        )

    def _first_blocked_step(self) -> _Blocked | None:
        """The first remaining step the monitor finds unsuitable in a known situation.

        The monitor is asked once per situation, about every remaining step it could
        affect, in plan order; it stops at the first unsuitable one. A later situation
        is asked only about the steps before the first block found so far, so at equal
        steps the earlier situation decides, and no step past a known block is asked.

        Not every pair is asked (see `_guarded`): a step whose action already carries
        the situation's precondition, or that does not touch the object the situation
        was found to be about. The first rule is what makes the loop end (each action
        and situation pair is blocked once); the second keeps a small model's false
        alarms ("find the spoon, if the cup is dirty? no") from blocking the stand-in.
        """
        live = [known for known in self._state.situations if not self._moot(known)]
        remaining = self._state.remaining
        focus = [arg for step in remaining for arg in step.args]
        found: _Blocked | None = None
        for known in live:
            limit = len(remaining) if found is None else found.index
            indices = [i for i in range(limit) if not self._guarded(remaining[i], known)]
            if not indices:
                continue
            self.cancel.check()
            check = self.monitor.check(
                [remaining[i] for i in indices], known.situation, self.task, focus
            )
            for verdict in check.verdicts:
                self.report.add(EventKind.MONITOR, monitor_event_text(verdict), **verdict.to_dict())
            if check.blocked is not None:
                # The step the check names, not its last verdict's: a monitor that
                # decides once per situation asks no question per step.
                checked = [remaining[i] for i in indices]
                at = checked.index(check.blocked) if check.blocked in checked else -1
                index = indices[at if at >= 0 else len(check.verdicts) - 1]
                found = _Blocked(index, remaining[index], known, check)
        return found

    def _moot(self, known: KnownSituation) -> bool:
        """True for a new situation about a kind of object the plan gave up for a stand-in.

        After a bowl took the dirty cup's role, "the cup is broken" changes nothing, but
        a small model still finds "hold the bowl, if the cup is broken" unsuitable. Only
        kinds replaced by acquired knowledge and used by no remaining step are set aside;
        a situation the monitor already blocked on keeps its precondition.
        """
        if known.set_aside:
            return True
        if known.fact is not None:
            return False
        kind = self._kind_of(known.situation)
        learned = {r.role_type: r.new_type for r in self._state.learned}
        if kind is None or kind not in learned:
            return False
        if any(
            object_type(arg, self.task) == kind for s in self._state.remaining for arg in s.args
        ):
            return False
        known.set_aside = True
        self.report.add(
            EventKind.SITUATION,
            f"set aside: {sentence(known.text)}: the plan no longer uses {noun(kind)} "
            f"({noun(learned[kind], 'a')} took its role)",
            situation=known.text,
            set_aside=True,
        )
        return True

    def _kind_of(self, situation: Situation) -> str | None:
        """The kind of object a situation is about: its source's word when it gave one,
        else the first object or kind the sentence names."""
        if situation.object:
            if situation.object in self.task.objects:
                return self.task.objects[situation.object]
            if situation.object in self.task.types:
                return situation.object
        return mentioned_kind(situation.text, self.task)

    def _guarded(self, step: PlanStep, known: KnownSituation) -> bool:
        """True when `step` cannot be affected by `known` beyond what PDDL already says.

        Before its first block a situation may concern any step (the monitor decides
        which: "the sink is not found" blocks find_faucet). Once it has a fact about an
        object, only steps that use that object are at risk; a world fact (no object)
        stays relevant to every step.
        """
        if known.fact is None:
            return False
        subject = known.fact.subject
        if subject is not None and subject not in step.args:
            return True
        predicate = known.fact.atom.predicate
        return any(
            not lit.positive and lit.atom.predicate == predicate
            for lit in edits.precondition_literals(self.task, step.action)
        )

    def _fact_for(self, blocked: _Blocked) -> SituationFact:
        known = blocked.known
        if known.fact is None:
            fact = blocked.check.fact
            if fact is None:
                step = blocked.step
                focus = [*step.args, *(a for s in self._state.remaining for a in s.args)]
                self.cancel.check()
                fact = self.predicates.generate(known.situation, self.task, focus)
            known.fact = fact
            how = {
                "rules": "by rule",
                "model": "by the model",
                "world": "about the world",
                "source": "as its source said",
            }
            note = f" ({fact.note})" if fact.note else ""
            self.report.add(
                EventKind.PREDICATE,
                f"understood: {sentence(known.text)} as {fact.atom} "
                f"{how.get(fact.source, fact.source)}{note}",
                **fact.to_dict(),
            )
        return known.fact

    def _block(self, step: PlanStep, fact: SituationFact) -> None:
        """State the situation's fact and make it block `step`'s action."""
        task = self.task
        if fact.atom not in task.init_atoms:
            task = edits.add_fact(task, fact.atom)
            self._log_change(f"added fact {fact.atom}", change="add_fact", fact=str(fact.atom))
        if fact.subject is None:
            literal = Literal(fact.atom, positive=False)
        elif fact.subject in step.args:
            params = [str(v) for v in task.action(step.action).parameters]
            variable = params[step.args.index(fact.subject)]
            literal = Literal(Atom(fact.atom.predicate, (variable,)), positive=False)
        else:
            if fact.subject not in task.constants:
                task = edits.promote_to_constant(task, fact.subject)
                self._log_change(
                    f"made {fact.subject} a domain constant (named in {step.action})",
                    change="promote_to_constant",
                    object=fact.subject,
                )
            literal = Literal(fact.atom, positive=False)
        task = edits.add_precondition(task, step.action, literal)
        self._log_change(
            f"added precondition {literal} to {step.action}",
            change="add_precondition",
            action=step.action,
            literal=str(literal),
        )
        self.task = task.validated()

    def _acquire_or_give_up_for(self, step: PlanStep, known: KnownSituation | None) -> Reaction:
        situation = known.text if known else f"{step} failed"
        fact = known.fact if known else None
        if fact is not None and fact.subject not in step.args:
            # The precondition that blocks the step names no parameter of it ("(not
            # (water_is_dirty))", "(not (is_missing table_1))" on find_faucet): every
            # stand-in's copy of the action keeps it verbatim, so no stand-in can help.
            # Asking Prompt 2 about every object present would only cost calls.
            subject = fact.subject
            about = "the world" if subject is None else noun(object_type(subject, self.task))
            self._give_up(
                f"{sentence(situation)}, and no stand-in can help: it is about {about}, "
                f"not an object of {self.describe(step)}"
            )
            return Reaction.NO_SOLUTION
        if self._acquire(step, fact, situation):
            return Reaction.ACQUIRED
        role = self._role_of(step, fact)
        what = f"no present object could take {noun(role[1])}'s role" if role else "nothing to try"
        self._give_up(f"{sentence(situation)}, and {what}")
        return Reaction.NO_SOLUTION

    def _role_of(self, step: PlanStep, fact: SituationFact | None) -> tuple[str, str] | None:
        """(object, parameter type) whose role the acquirer should fill for `step`."""
        if not step.args:
            return None
        subject = fact.subject if fact else None
        role_object = subject if subject in step.args else step.args[0]
        role_type = self.task.parameter_types(step.action)[step.args.index(role_object)]
        return role_object, role_type

    def _acquire(self, step: PlanStep, fact: SituationFact | None, situation: str) -> bool:
        """Knowledge acquisition for the role `step` cannot fill; True once a plan exists."""
        role = self._role_of(step, fact)
        if role is None:
            return False
        _, role_type = role
        plan_order = [step.action, *(s.action for s in self._state.remaining)]
        actions = role_actions(self.task, role_type, plan_order)
        tried = self._state.tried_types.setdefault(role_type, set())
        candidates = candidate_types(self.task, role_type, exclude=sorted(tried))
        candidates = self.acquirer.rank(self.task, role_type, candidates, self.description)
        if self.settings.max_candidates is not None:
            candidates = candidates[: self.settings.max_candidates]
        accepted: list[CandidateAssessment] = []
        for candidate_type, example in candidates:
            self.cancel.check()
            tried.add(candidate_type)
            assessment = self.acquirer.assess(
                self.task, role_type, actions, candidate_type, example, self.description
            )
            for q in assessment.questions:
                self.report.add(
                    EventKind.ACQUIRER,
                    f"asked: {q.question} -> {q.answer.text.strip() or '?'}",
                    candidate=candidate_type,
                    **q.to_dict(),
                )
            if assessment.accepted:
                accepted.append(assessment)
                if self.acquirer.enough(accepted):
                    break
        while accepted:
            self.cancel.check()
            selection = self.acquirer.select(accepted, role_type, self.description, situation)
            self.report.add(
                EventKind.SELECTION,
                f"chose {noun(selection.chosen, 'a')} to replace {noun(role_type)} "
                f"({selection.how})",
                **selection.to_dict(),
            )
            task = self.task
            variants = []
            for action in actions:
                task, variant = edits.add_action_variant(task, action, role_type, selection.chosen)
                variants.append(variant)
                self._log_change(
                    f"added action {variant} ({noun(selection.chosen, 'a')} in "
                    f"{noun(role_type)}'s role in {action})",
                    change="add_action_variant",
                    action=action,
                    variant=variant,
                    role_type=role_type,
                    new_type=selection.chosen,
                )
            self.task = task.validated()
            result = self._replan(f"with {noun(selection.chosen, 'a')} as {noun(role_type)}")
            if result.found:
                self._state.learned.append(
                    LearnedRole(role_type, selection.chosen, variants, situation)
                )
                self.report.add(
                    EventKind.LEARNED,
                    f"learned: {noun(selection.chosen, 'a')} can take {noun(role_type)}'s "
                    f"role ({', '.join(variants)})",
                    role_type=role_type,
                    new_type=selection.chosen,
                    variants=variants,
                )
                return True
            accepted = [a for a in accepted if a.candidate_type != selection.chosen]
        return False

    def _replan(self, reason: str) -> PlanResult:
        self.cancel.check()
        result = self.planner.solve(self.task, self.settings.planner_timeout_s)
        if result.found:
            self._state.remaining = list(result.steps)
            steps = ", ".join(str(s) for s in result.steps) or "nothing left to do"
            text = f"planned ({reason}): {steps} [{result.seconds:.2f} s]"
        elif result.status is PlanStatus.TIMEOUT:
            text = f"no plan in time ({reason}): {result.detail}"
        else:
            text = f"no plan ({reason})"
        self.report.add(EventKind.PLAN, text, reason=reason, **result.to_dict())
        return result

    def _log_change(self, text: str, **data: object) -> None:
        self.report.add(EventKind.PDDL_CHANGE, text, **data)

    def _give_up(self, why: str) -> None:
        self._phase = Phase.NO_SOLUTION
        self._state.remaining = []
        self._state.failure = why
        self.report.add(EventKind.OUTCOME, f"no solution: {why}", outcome="no_solution")

    def _finish_if_goal_reached(self) -> None:
        if self._phase is not Phase.EXECUTING:
            return
        if self.task.goal_atoms <= self.task.init_atoms:
            self._phase = Phase.COMPLETED
            self._state.remaining = []
            self.report.add(
                EventKind.OUTCOME, f"completed: {self.explanation()}", outcome="completed"
            )


def _required(model: LanguageModel | None) -> LanguageModel:
    """The model, for the in-process reasoners a caller did not replace."""
    if model is None:
        raise CowpError("without a model, give the monitor, acquirer and predicates")
    return model
