"""DKPROMPT on the text simulator: a step's PDDL preconditions and effects as questions.

The bench's world reports what the robot sees as sentences, not images, so the
questions DKPROMPT would put to a vision-language model are put to the text model with
the latest observation as the scene ("The robot sees: the cup is dirty. Is the robot
holding the cup in its gripper?"). Before a step its preconditions are asked, after it
its effects; the answers update the state, and a mismatch replans. Without an
observation nothing is asked (as with no image). DKPROMPT learns no new preconditions
or objects: a situation that breaks no PDDL predicate ("the cup is dirty" for
fill_cup) goes unnoticed, which is what this baseline shows next to COWP.
Mode: `context.options["dkprompt"]` = pre | post | both (default both).
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.simulator import Episode
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.dkprompt.loop import DKPromptMode
from cowp_ros.methods.dkprompt.questions import Answer, DKPromptChecker
from cowp_ros.pddl import edits
from cowp_ros.planning import PlanStep

OBSERVATION_SYSTEM = (
    "You check a household robot's plan against what it observes. Answer the question "
    "about the scene with one word: Yes or No."
)


class TextObservationQuestioner:
    """A `VisualQuestioner` whose "image" is the robot's latest observation in words."""

    def __init__(self, model: LanguageModel) -> None:
        self.model = model
        self.name = f"{getattr(model, 'name', 'model')} (text observations)"

    def ask(self, questions: Sequence[str], image: object | None) -> list[Answer]:
        answers = []
        for question in questions:
            verdict = self.model.ask_yes_no(
                f"The robot sees: {str(image).strip().rstrip('.')}. {question}",
                system=OBSERVATION_SYSTEM,
            )
            answers.append(
                Answer.SKIP
                if verdict.answer is None
                else Answer.YES
                if verdict.answer
                else Answer.NO
            )
        return answers


class DKPrompt:
    name = "dkprompt"
    label = "DKPROMPT"
    uses_llm = True
    summary = "DKPROMPT: ask each step's preconditions/effects about the observation; replan"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("DKPROMPT needs a language model")
        self.context = context
        self.mode = DKPromptMode.parse(str(context.options.get("dkprompt", "both")))
        self.checker = DKPromptChecker(TextObservationQuestioner(context.model))

    def run(self, episode: Episode) -> None:
        task = episode.problem
        observation: str | None = None
        remaining: list[PlanStep] = []
        failures = 0
        replan = True
        while not episode.finished:
            if replan or not remaining:
                result = self.context.planner.solve(task, 60.0)
                if not result.found or not result.steps:
                    episode.give_up(f"no plan from the observed state ({result.status.value})")
                    return
                remaining, replan = list(result.steps), False
            step = remaining[0]
            if self.mode.checks_pre and observation is not None:
                checked = self.checker.check(task, step, "pre", observation)
                task = checked.task
                if checked.mismatches:
                    replan = True
                    continue
            outcome = episode.execute(step)
            if episode.finished:
                return
            if outcome.situation is not None:
                observation = outcome.situation
                continue
            if not outcome.executed:
                failures += 1
                if failures >= 3:
                    episode.give_up(f"{step} failed {failures} times")
                    return
                replan = True
                continue
            failures = 0
            remaining.pop(0)
            task = edits.apply_action(task, step.action, step.args)
            if self.mode.checks_post and observation is not None:
                checked = self.checker.check(task, step, "post", observation)
                task = checked.task
                replan = bool(checked.mismatches)


METHOD = DKPrompt
