"""One decision per situation, grounded first: does it stop the robot using what it is about?

COWP's Plan Monitor asks Prompt 1 for every remaining step. Each question is calibrated,
but the chances of a false alarm add up over the steps, and a small model then replans
on "the cup is blue". Users care about one decision per situation: does it block the
task, and if so, which object can no longer be used. This monitor makes that decision
once per situation (`Decision`), in three ways, cheapest first:

- **grounding alone** (no question): the situation is about an object present that no
  remaining step uses ("a chair was moved in the living room", "the outlet is white"
  while the plan plugs into another outlet): harmless.
- **questions about the object's functions**, when a remaining step uses it
  (`questions.py`): its use in the task first ("Task: filling a cup with water from
  the faucet. The cup is broken. Can the robot still use the cup for the task?"); if it
  is still usable, whether the situation makes it dirty, and if so (once per role)
  whether the task's own words already call it dirty and, where they do not, whether
  the task needs it clean. A small model weighs dirt lightly in the use question ("the
  cup is dirty": about even odds), yet answers the narrow questions reliably; so a
  dirty cup is caught by the monitor itself, not by a step that fails later.
  Thresholds per model, chosen on the dev tasks (`config/grounded.yaml`).
- **one question about the task**, for a situation that names no object present ("there
  is a power outage"), with a threshold that asks the model to be strongly sure:
  blocking the task on a sentence about nothing the robot touches is what makes a robot
  give up on "the dishwasher in the next room is running".

A blocked decision names the first remaining step that uses the object (a release step,
one that only lets go of it, does not count: a broken cup can still be put down), and
carries the situation's fact (`grounding.fact_of`), so the loop needs no model to state
it. The loop asks again after each replan; the decision is kept per (situation,
object), so no question is asked twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cowp_ros.cowp.answers import MonitorVerdict, PlanCheck
from cowp_ros.cowp.situation import Situation
from cowp_ros.limits import MAX_KEPT_ROLES
from cowp_ros.llm.language_model import Example, LanguageModel, YesNo
from cowp_ros.methods.grounded.grounding import Grounding, fact_of, ground, plan_objects
from cowp_ros.methods.grounded.questions import (
    EXAMPLES,
    need_question,
    restate_question,
    restated,
    state_question,
    task_question,
    task_state_question,
    use_question,
    warm,
)
from cowp_ros.methods.paper.calibration.scoring import logit
from cowp_ros.methods.paper.prompts import sentence
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.formulas import top_literals
from cowp_ros.pddl.model import atom_of
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import noun, object_type


def is_release(task: PlanningTask, action: str) -> bool:
    """True for an action that only lets go of its objects: none of its positive effects
    mentions a parameter ("put the cup down": hand free, not holding the cup)."""
    params = {str(p) for p in task.action(action).parameters}
    for literal in top_literals(task.action(action).effect):
        if literal.positive and params & set(atom_of(literal.predicate).args):
            return False
    return True


def uses(task: PlanningTask, step: PlanStep, obj: str) -> bool:
    """`step` needs `obj` to be usable (it names it, and does more than let go of it)."""
    return obj in step.args and not is_release(task, step.action)


@dataclass(frozen=True)
class Thresholds:
    """Where each question's score blocks (see `config/grounded.yaml`); every score is
    the log-odds of the answer that blocks.

    `use`: "no" to the question about a plan object's use. `world`: "no" to the question
    about the task, for situations that name no object present (high: the model must be
    strongly sure). `dirty`: "yes" to "is the object dirty?"; `need`: "yes" to "does the
    task need it clean?" (a dirty object blocks only where both are reached).
    """

    use: float = 0.0
    world: float = 2.0
    dirty: float = 0.0
    need: float = 0.0


RESTATEMENT_TOKENS = 16
"""The most a restatement may say ("The vacuum power cord is too short." is 9 tokens)."""

RESTATEMENT_WORDS = 10
"""A restatement longer than this is a story, not the fixed form: dropped."""

USE = "question"
STATE = "state question"
NEED = "need question"
TASK_STATE = "task state question"
WORLD = "world question"
YES_BLOCKS = frozenset({STATE, NEED})
"""The questions whose "yes" is the answer that blocks (a dirty object, a clean need)."""


@dataclass(frozen=True)
class Asked:
    """One question of a decision, its answer and its score against its threshold."""

    kind: str  # USE | STATE | NEED | WORLD
    question: str
    answer: YesNo
    score: float | None
    threshold: float
    seconds: float = 0.0  # how long the model took to answer
    says: tuple[str, str] = ("", "")  # what it means in words, when reached and when not

    @property
    def reached(self) -> bool:
        """The answer points the blocking way, as sure as the threshold asks (without
        P(yes), the answer's own word; an answer that is neither reaches nothing)."""
        if self.score is not None:
            return self.score >= self.threshold
        return self.answer.answer is (self.kind in YES_BLOCKS)

    @property
    def judgement(self) -> str:
        """What the answer was judged to mean, in words ("the cup is not dirty")."""
        return self.says[0] if self.reached else self.says[1]

    @property
    def confidence(self) -> float | None:
        """The model's probability of the answer judged (the blocking one if reached)."""
        if self.answer.p_yes is None:
            return None
        judged_yes = self.reached is (self.kind in YES_BLOCKS)
        return self.answer.p_yes if judged_yes else 1.0 - self.answer.p_yes

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "question": self.question,
            "p_yes": self.answer.p_yes,
            "score": self.score,
            "threshold": self.threshold,
            "reached": self.reached,
            "seconds": round(self.seconds, 4),
        }


RoleNeeds = dict[tuple[str, str], tuple[Asked, ...]]
"""What each role needs, asked once: (the task's words, the role's noun) -> the task-state
question and, where asked, the need question (`_clean_need`)."""

RoleStates = dict[tuple[str, str], Asked]
"""Whether the task's words call each role dirty, asked once: (the task's words, the
role's noun) -> the task-state question (kept alone too, for a need still to be asked)."""


@dataclass
class Decision:
    """One situation's verdict and how it was reached (for the report and the bench).

    `by`: the route (`grounding`, `question` about an object the plan uses, or `world
    question`); `asked`: the questions asked for it, in order (a role's clean need is
    asked once per role, in the first decision that needs it); `because`: the question
    that decided a block (None when harmless).
    """

    situation: str
    grounding: Grounding
    blocks: bool
    by: str  # "grounding" | "question" | "world question"
    asked: tuple[Asked, ...] = ()
    because: Asked | None = None
    restated: str = ""  # what the situation leaves its object like, when restated first

    @property
    def first(self) -> Asked | None:
        """The first question asked (about the object's use, or about the task)."""
        return self.asked[0] if self.asked else None

    @property
    def question(self) -> str:
        return self.first.question if self.first else ""

    @property
    def answer(self) -> YesNo | None:
        return self.first.answer if self.first else None

    @property
    def score(self) -> float | None:
        return self.first.score if self.first else None

    @property
    def threshold(self) -> float | None:
        return self.first.threshold if self.first else None

    def score_of(self, kind: str) -> float | None:
        """The score of this decision's `kind` question, if it was asked."""
        return next((a.score for a in self.asked if a.kind == kind), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "situation": self.situation,
            "subject": self.grounding.subject,
            "grounded": self.grounding.how,
            "in_plan": self.grounding.in_plan,
            "blocks": self.blocks,
            "by": self.by,
            "because": self.because.kind if self.because else None,
            "question": self.question,
            "p_yes": self.answer.p_yes if self.answer else None,
            "score": self.score,
            "threshold": self.threshold,
            "asked": [a.to_dict() for a in self.asked],
            "restated": self.restated,
        }

    def describe(self) -> str:
        verdict = "blocks" if self.blocks else "harmless"
        if self.by == "grounding":
            how = "by grounding alone"
        else:
            count = len(self.asked)
            how = f"after {count} question{'s' if count != 1 else ''}"
            if self.because is not None:
                how += {
                    USE: ": it can no longer be used",
                    NEED: ": it is dirty and the task needs it clean",
                    WORLD: ": the task cannot go on",
                }.get(self.because.kind, "")
        decisive = self.because or self.first
        score = (
            f" (score {decisive.score:.2f} vs {decisive.threshold:.2f})"
            if decisive is not None and decisive.score is not None
            else ""
        )
        read_as = f" (read as: {self.restated})" if self.restated else ""
        return (
            f"decided: {sentence(self.situation)}{read_as}: {verdict} {how}{score}; "
            f"{self.grounding.describe()}"
        )


@dataclass
class GroundedMonitor:
    """The `Monitor` port, one grounded decision per situation (see the module docstring).

    `task_description` words the task in the questions ("filling a cup with water from
    the faucet"). `decisions` keeps every decision made, in order. `ask_all` asks every
    question of a role's clean need whatever the first answer says (for measuring each
    question's scores: `benchmarks/bench_grounded_thresholds.py`). `needs` holds what
    each role needs, keyed by the task's words and the role; a caller that keeps one
    monitor's answers for the next (the commonsense node, one monitor per request)
    passes the same `RoleNeeds` to each, and the same `stated` (whether the task's words
    call each role dirty, kept alone where the clean need is still to be asked).

    `restate` has the model first say what the situation leaves the object like, in a
    fixed form ("The cup is dirty."), and the object's questions read both the sentence
    and that restatement: the same state said in other words then reaches the questions
    in the same few words (`examples` must then hold the restatement's examples too:
    `questions.examples_for`). `read_both` (with `restate`) asks the object's questions
    of the sentence alone and of the sentence with its restatement, and decides on the
    mean of the two scores (`_ask_readings`).
    """

    model: LanguageModel
    task_description: str
    thresholds: Thresholds = field(default_factory=Thresholds)
    examples: tuple[Example, ...] = EXAMPLES
    reserved: frozenset[str] = frozenset()
    ask_all: bool = False
    restate: bool = False
    read_both: bool = False
    decisions: list[Decision] = field(default_factory=list)
    needs: RoleNeeds = field(default_factory=dict)
    stated: RoleStates = field(default_factory=dict)
    _memo: dict[tuple[str, str | None, bool], Decision] = field(default_factory=dict)

    def check(
        self,
        steps: Sequence[PlanStep],
        situation: Situation,
        task: PlanningTask,
        focus: Sequence[str] = (),
    ) -> PlanCheck:
        """The `Monitor` port: the situation's decision, the step it blocks, its fact."""
        if not steps:
            return PlanCheck()
        plan = [o for o in (list(focus) or plan_objects(steps))]
        usable = [o for o in plan if any(uses(task, s, o) for s in steps)]
        grounding = ground(situation, task, usable)
        decision, fresh = self.decide(situation, grounding, task)
        target = self._blocked_step(steps, grounding, task) if decision.blocks else None
        verdicts: tuple[MonitorVerdict, ...] = ()
        if fresh:
            step = target or steps[0]
            verdicts = tuple(_verdict(step, situation.text, asked) for asked in decision.asked)
        if target is None:
            return PlanCheck(verdicts)
        fact = fact_of(situation, grounding, task, self.reserved)
        return PlanCheck(verdicts, target, fact, reason=decision.describe())

    def prepare(self, steps: Sequence[PlanStep], task: PlanningTask) -> tuple[MonitorVerdict, ...]:
        """The `MonitorPreparation` port: the clean need of each role the plan uses, asked
        now for the roles not known yet (when the plan is made, not when a situation
        comes), so that a dirty object is then decided in two questions and a remark
        about a role that dirt cannot block in one.

        The same questions as a decision asks, grouped by form so that each reads only
        its last words after the one before: first whether the task's words call each
        role dirty, then the need of the roles they do not. The task's words are read
        again after them (the need question's own form leaves the server's prompt cache
        elsewhere), so that the first situation costs only its own words.

        A situation may be decided while these are asked (a model taken in turns,
        `llm.turns`, answers a decision between two of them): each answer is kept as
        soon as it comes, in the same turn as its question, so that the decision reuses
        it rather than asking again, and a role the decision asked about meanwhile is not
        asked again here."""
        roles: dict[str, PlanStep] = {}
        for obj in plan_objects(steps):
            step = next((s for s in steps if uses(task, s, obj)), None)
            object_noun = noun(object_type(obj, task))
            if step is not None and self._known_needs(object_noun) is None:
                roles.setdefault(object_noun, step)
        one_turn = getattr(self.model, "one_turn", contextlib.nullcontext)
        asked: list[tuple[str, Asked]] = []
        states: dict[str, Asked] = {}
        for role in roles:
            with one_turn():
                known = self._known_state(role)
                if self._known_needs(role) is None and known is None:
                    known = self._task_state(role)
                    asked.append((role, known))
                    if not known.reached:
                        self._keep_needs(role, (known,))
                if known is not None:
                    states[role] = known
        for role in roles:
            with one_turn():
                known = states.get(role)
                if self._known_needs(role) is None and known is not None and known.reached:
                    need = self._need(role)
                    asked.append((role, need))
                    self._keep_needs(role, (known, need))
        if asked:
            warm(self.model, self.task_description, self.examples)
        return tuple(_verdict(roles[role], "", one) for role, one in asked)

    def decide(
        self, situation: Situation, grounding: Grounding, task: PlanningTask
    ) -> tuple[Decision, bool]:
        """(decision, made now): asked at most once per situation and object."""
        key = (situation.text, grounding.subject, grounding.in_plan)
        if key in self._memo:
            return self._memo[key], False
        if grounding.subject is not None and not grounding.in_plan:
            decision = Decision(situation.text, grounding, blocks=False, by="grounding")
        elif grounding.subject is not None:
            assert grounding.kind is not None
            decision = self._object_decision(situation, grounding, noun(grounding.kind))
        else:
            world = self.ask(
                WORLD,
                task_question(self.task_description, situation.text),
                self.thresholds.world,
                ("the task cannot go on", "the task can go on"),
            )
            because = world if world.reached else None
            decision = Decision(situation.text, grounding, world.reached, WORLD, (world,), because)
        self._memo[key] = decision
        self.decisions.append(decision)
        return decision, True

    def _object_decision(
        self, situation: Situation, grounding: Grounding, object_noun: str
    ) -> Decision:
        """Its use first; if still usable, dirt, and then (once per role) the task's own
        words about the object's dirt and the clean need."""
        text = situation.text
        said, plain, restating = text, "", 0.0
        if self.restate:
            said, plain, restating = self.restate_situation(object_noun, text)
        readings = (text, said) if self.read_both and said != text else (said,)
        use = self._ask_readings(
            USE,
            [use_question(object_noun, self.task_description, r) for r in readings],
            self.thresholds.use,
            (f"{object_noun} can no longer be used", f"{object_noun} can still be used"),
        )
        # The restatement is part of what the use question cost.
        use = dataclasses.replace(use, seconds=use.seconds + restating)
        if use.reached:
            return Decision(text, grounding, True, USE, (use,), use, plain)
        needs = self._known_needs(object_noun)
        if needs is not None and not needed_clean(needs):
            # Dirt cannot block this role (the task does not need it clean, or calls it
            # dirty): whether the situation makes it dirty decides nothing.
            return Decision(text, grounding, False, USE, (use,), restated=plain)
        state = self._ask_readings(
            STATE,
            [state_question(object_noun, self.task_description, r) for r in readings],
            self.thresholds.dirty,
            (f"{object_noun} is dirty", f"{object_noun} is not dirty"),
        )
        if not state.reached:
            return Decision(text, grounding, False, USE, (use, state), restated=plain)
        asked: tuple[Asked, ...] = (use, state)
        if needs is None:
            needs = self._clean_need(object_noun)
            self._keep_needs(object_noun, needs)
            asked += needs
        needed = needed_clean(needs)
        because = next((a for a in needs if a.kind == NEED), None) if needed else None
        return Decision(text, grounding, because is not None, USE, asked, because, plain)

    def restate_situation(self, object_noun: str, text: str) -> tuple[str, str, float]:
        """(the situation as the questions read it, the restatement, its seconds).

        The restatement counts only where it speaks of the object in a short sentence
        of its own; anything else (a refusal, a story, another object) is dropped and
        the questions read the situation alone. Public, as `ask` is: the question-views
        bench asks its other wordings through the monitor's own restating and scoring."""
        started = time.monotonic()
        reply = self.model.complete(
            restate_question(object_noun, self.task_description, text),
            examples=self.examples,
            max_tokens=RESTATEMENT_TOKENS,
        )
        seconds = time.monotonic() - started
        lines = reply.strip().splitlines()
        plain = lines[0].strip() if lines else ""
        head = object_noun.split()[-1].lower()
        if not plain or head not in plain.lower() or len(plain.split()) > RESTATEMENT_WORDS:
            return text, "", seconds
        return restated(text, plain), plain.rstrip("."), seconds

    def _known_needs(self, object_noun: str) -> tuple[Asked, ...] | None:
        return self.needs.get((self.task_description, object_noun))

    def _keep_needs(self, object_noun: str, asked: tuple[Asked, ...]) -> None:
        """Kept by the task's words and the role; the oldest forgotten past the bound."""
        while len(self.needs) >= MAX_KEPT_ROLES:
            del self.needs[next(iter(self.needs))]
        self.needs[(self.task_description, object_noun)] = asked

    def _clean_need(self, object_noun: str) -> tuple[Asked, ...]:
        """Does the task need the object clean (asked once per role)? First whether the
        task's own words call it dirty ("putting a dirty plate into the sink": then it
        is not needed clean, and nothing more is asked), then the clean need itself.

        That order reads fewest words: the task-state question starts with the task's
        words, as the dirt question just asked did, so the server reads only its last
        ones; the need question has a form of its own and is read whole either way."""
        expected = self._task_state(object_noun)
        if not expected.reached and not self.ask_all:
            return (expected,)
        return (expected, self._need(object_noun))

    def _known_state(self, object_noun: str) -> Asked | None:
        return self.stated.get((self.task_description, object_noun))

    def _task_state(self, object_noun: str) -> Asked:
        """Do the task's own words call the object dirty? (reached: they do not) Asked
        once per role and kept (`stated`), also where the clean need is still to come."""
        known = self._known_state(object_noun)
        if known is not None:
            return known
        while len(self.stated) >= MAX_KEPT_ROLES:
            del self.stated[next(iter(self.stated))]
        asked = self.stated[(self.task_description, object_noun)] = self.ask(
            TASK_STATE,
            task_state_question(object_noun, self.task_description),
            0.0,  # the model's own word: "yes" (the task calls it dirty) is the harmless one
            (f"the task does not call {object_noun} dirty", f"the task calls {object_noun} dirty"),
        )
        return asked

    def _need(self, object_noun: str) -> Asked:
        """Does the task need the object clean?"""
        task = self.task_description
        return self.ask(
            NEED,
            need_question(object_noun, task),
            self.thresholds.need,
            (f"{task} needs {object_noun} clean", f"{task} does not need {object_noun} clean"),
        )

    def _ask_readings(
        self, kind: str, asked: Sequence[str], threshold: float, says: tuple[str, str]
    ) -> Asked:
        """One question asked of each reading of the situation (the sentence, and the
        sentence with its restatement, `read_both`), decided on the mean of their
        scores: a wording one reading misses, the other often catches, and the mean
        moves less with the wording than either. One reading is one question."""
        answers = [self.ask(kind, question, threshold, says) for question in asked]
        if len(answers) == 1:
            return answers[0]
        scores = [a.score for a in answers]
        seconds = sum(a.seconds for a in answers)
        last = answers[-1]
        if any(score is None for score in scores):
            return dataclasses.replace(last, seconds=seconds)
        mean = sum(score for score in scores if score is not None) / len(scores)
        yes = mean if kind in YES_BLOCKS else -mean
        p_yes = 1.0 / (1.0 + math.exp(-yes))
        answer = YesNo(p_yes >= 0.5, p_yes, last.answer.text, last.answer.cached)
        return Asked(kind, " | ".join(asked), answer, mean, threshold, seconds, says)

    def ask(self, kind: str, question: str, threshold: float, says: tuple[str, str]) -> Asked:
        """One question after the shared examples; its score is the log-odds of the
        answer that blocks (`YES_BLOCKS`)."""
        started = time.monotonic()
        answer = self.model.ask_yes_no(question, examples=self.examples)
        seconds = time.monotonic() - started
        score = None
        if answer.p_yes is not None:
            yes = logit(answer.p_yes)
            score = yes if kind in YES_BLOCKS else -yes
        return Asked(kind, question, answer, score, threshold, seconds, says)

    @staticmethod
    def _blocked_step(
        steps: Sequence[PlanStep], grounding: Grounding, task: PlanningTask
    ) -> PlanStep | None:
        """The first step the situation stops: the first that uses its object, or, for
        a situation about the world, the next step."""
        if grounding.subject is None:
            return steps[0]
        return next((s for s in steps if uses(task, s, grounding.subject)), None)


def needed_clean(needs: Sequence[Asked]) -> bool:
    """A role's need questions say the task needs it clean: every one points that way
    (the task's words do not call it dirty, and the need is reached)."""
    return all(a.reached for a in needs)


def _verdict(step: PlanStep, situation: str, asked: Asked) -> MonitorVerdict:
    """One question of the monitor as the loop records it (`situation` "" for one asked
    when the plan was made)."""
    return MonitorVerdict(
        step,
        situation,
        asked.question,
        asked.answer,
        suitable=not asked.reached,
        unclear=asked.answer.p_yes is None,
        score=asked.score,
        threshold=asked.threshold,
        variant=asked.kind,
        seconds=asked.seconds,
        judgement=asked.judgement,
        confidence=asked.confidence,
    )


def decisions_text(decisions: Sequence[Decision]) -> list[str]:
    """The decisions as report lines."""
    return [d.describe() for d in decisions]
