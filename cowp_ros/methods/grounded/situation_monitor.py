"""One decision per situation, grounded first: does it stop the robot using what it is about?

COWP's Plan Monitor asks Prompt 1 for every remaining step. Each question is calibrated,
but the chances of a false alarm add up over the steps, and a small model then replans
on "the cup is blue". Users care about one decision per situation: does it block the
task, and if so, which object can no longer be used. This monitor makes that decision
once per situation (`Decision`), in three ways, cheapest first:

- **grounding alone** (no question): the situation is about an object present that no
  remaining step uses ("a chair was moved in the living room", "the outlet is white"
  while the plan plugs into another outlet): harmless.
- **one question about the object's use in the task**, when a remaining step uses it:
  "Can the robot still use the cup for filling a cup with water from the faucet, if the
  cup is dirty?"; blocked when the log-odds of "no" reach the threshold chosen for this
  model on the dev tasks (`config/grounded.yaml`).
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.language_model import Example, LanguageModel, YesNo
from cowp_ros.methods.grounded.grounding import Grounding, fact_of, ground, plan_objects
from cowp_ros.methods.paper.calibration.scoring import logit
from cowp_ros.methods.paper.monitor import MonitorVerdict, PlanCheck
from cowp_ros.methods.paper.prompts import sentence
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.formulas import literals_of
from cowp_ros.pddl.model import atom_of
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import noun

USE_EXAMPLES: tuple[Example, ...] = (
    Example(
        "Can the robot still use the drawer for storing the socks, if the drawer is locked?", "No"
    ),
    Example(
        "Can the robot still use the drawer for storing the socks, if the drawer is blue?", "Yes"
    ),
    Example(
        "Can the robot still use the kettle for boiling water for tea, if the kettle is leaking?",
        "No",
    ),
    Example(
        "Can the robot still use the kettle for boiling water for tea, if the kettle is made of "
        "steel?",
        "Yes",
    ),
    Example(
        "Can the robot still use the towel for drying the dishes, if a cat is sleeping on the "
        "sofa?",
        "Yes",
    ),
    Example(
        "Can the robot still use the towel for drying the dishes, if the towel is soaking wet?",
        "No",
    ),
)
"""Contrastive pairs from household tasks outside the benchmark's: the same object and
task, once with a situation that spoils it and once with one that does not."""

TASK_EXAMPLES: tuple[Example, ...] = (
    Example("Can the robot still go on with watering the plants, if the radio is on?", "Yes"),
    Example(
        "Can the robot still go on with watering the plants, if there is no water in the house?",
        "No",
    ),
    Example("Can the robot still go on with making tea, if it is snowing outside?", "Yes"),
    Example("Can the robot still go on with making tea, if the robot's arm is broken?", "No"),
)
"""The same for situations about the world rather than one object."""


def warm(model: LanguageModel) -> None:
    """Have the model's server read the questions' shared prefix (instructions and
    examples) now, so that the first situation of a run costs only its own words.

    Every question of this monitor shares that prefix; a server that keeps its last
    prompt (llama.cpp's prompt cache) then reads only the new question. A model without
    a `warm` method (a scripted double, a cache) is left alone.
    """
    warm_prefix = getattr(model, "warm", None)
    if callable(warm_prefix):
        warm_prefix(examples=USE_EXAMPLES)


def use_question(object_noun: str, task_description: str, situation: str) -> str:
    """The one question about an object the plan uses."""
    return (
        f"Can the robot still use {object_noun} for {task_description}, if {sentence(situation)}?"
    )


def task_question(task_description: str, situation: str) -> str:
    """The one question about a situation that names no object present."""
    return f"Can the robot still go on with {task_description}, if {sentence(situation)}?"


def is_release(task: PlanningTask, action: str) -> bool:
    """True for an action that only lets go of its objects: none of its positive effects
    mentions a parameter ("put the cup down": hand free, not holding the cup)."""
    params = {str(p) for p in task.action(action).parameters}
    for literal in literals_of(task.action(action).effect):
        if literal.positive and params & set(atom_of(literal.predicate).args):
            return False
    return True


def uses(task: PlanningTask, step: PlanStep, obj: str) -> bool:
    """`step` needs `obj` to be usable (it names it, and does more than let go of it)."""
    return obj in step.args and not is_release(task, step.action)


@dataclass(frozen=True)
class Thresholds:
    """Blocked when the log-odds of "no" reach the threshold (see `config/grounded.yaml`).

    `use`: the question about a plan object's use. `world`: the question about the task,
    for situations that name no object present (high: the model must be strongly sure).
    """

    use: float = 0.0
    world: float = 2.0


@dataclass
class Decision:
    """One situation's verdict and how it was reached (for the report and the bench)."""

    situation: str
    grounding: Grounding
    blocks: bool
    by: str  # "grounding" | "question" | "world question"
    question: str = ""
    answer: YesNo | None = None
    score: float | None = None
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "situation": self.situation,
            "subject": self.grounding.subject,
            "grounded": self.grounding.how,
            "in_plan": self.grounding.in_plan,
            "blocks": self.blocks,
            "by": self.by,
            "question": self.question,
            "p_yes": self.answer.p_yes if self.answer else None,
            "score": self.score,
            "threshold": self.threshold,
        }

    def describe(self) -> str:
        verdict = "blocks" if self.blocks else "harmless"
        how = {
            "grounding": "by grounding alone",
            "question": "by one question",
            "world question": "by one question about the task",
        }.get(self.by, self.by)
        score = (
            f" (score {self.score:.2f} vs {self.threshold:.2f})"
            if self.score is not None and self.threshold is not None
            else ""
        )
        return (
            f"decided: {sentence(self.situation)}: {verdict} {how}{score}; "
            f"{self.grounding.describe()}"
        )


@dataclass
class GroundedMonitor:
    """The `Monitor` port, one grounded decision per situation (see the module docstring).

    `task_description` words the task in the questions ("filling a cup with water from
    the faucet"). `decisions` keeps every decision made, in order.
    """

    model: LanguageModel
    task_description: str
    thresholds: Thresholds = field(default_factory=Thresholds)
    use_examples: tuple[Example, ...] = USE_EXAMPLES
    task_examples: tuple[Example, ...] = TASK_EXAMPLES
    reserved: frozenset[str] = frozenset()
    decisions: list[Decision] = field(default_factory=list)
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
        if decision.answer is not None and fresh:
            step = target or steps[0]
            verdicts = (
                MonitorVerdict(
                    step,
                    situation.text,
                    decision.question,
                    decision.answer,
                    suitable=not decision.blocks,
                    unclear=decision.answer.p_yes is None,
                    score=decision.score,
                    threshold=decision.threshold,
                    variant=decision.by,
                ),
            )
        if target is None:
            return PlanCheck(verdicts)
        fact = fact_of(situation, grounding, task, self.reserved)
        return PlanCheck(verdicts, target, fact, reason=decision.describe())

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
            question = use_question(noun(grounding.kind), self.task_description, situation.text)
            decision = self._asked(
                situation, grounding, question, self.use_examples, self.thresholds.use, "question"
            )
        else:
            question = task_question(self.task_description, situation.text)
            decision = self._asked(
                situation,
                grounding,
                question,
                self.task_examples,
                self.thresholds.world,
                "world question",
            )
        self._memo[key] = decision
        self.decisions.append(decision)
        return decision, True

    def _asked(
        self,
        situation: Situation,
        grounding: Grounding,
        question: str,
        examples: Sequence[Example],
        threshold: float,
        by: str,
    ) -> Decision:
        """Ask; blocked when -logit P(yes) >= threshold. Without P(yes) the answer's own
        word decides (an answer that is neither keeps the plan: no evidence)."""
        answer = self.model.ask_yes_no(question, examples=examples)
        if answer.p_yes is not None:
            score = -logit(answer.p_yes)
            blocks = score >= threshold
        else:
            score = None
            blocks = answer.answer is False
        return Decision(situation.text, grounding, blocks, by, question, answer, score, threshold)

    @staticmethod
    def _blocked_step(
        steps: Sequence[PlanStep], grounding: Grounding, task: PlanningTask
    ) -> PlanStep | None:
        """The first step the situation stops: the first that uses its object, or, for
        a situation about the world, the next step."""
        if grounding.subject is None:
            return steps[0]
        return next((s for s in steps if uses(task, s, grounding.subject)), None)


def decisions_text(decisions: Sequence[Decision]) -> list[str]:
    """The decisions as report lines."""
    return [d.describe() for d in decisions]
