"""DKPROMPT on the text simulator: a step's PDDL preconditions and effects as questions.

The bench's world reports what the robot sees as sentences, not images, so the
questions DKPROMPT would put to a vision-language model are put to the text model with
the latest observation as the scene ("The robot sees: the cup is dirty. Is the robot
holding the cup in its gripper?"). Before a step its preconditions are asked, after it
its effects; the answers update the state, and a mismatch replans. Without an
observation nothing is asked (as with no image). DKPROMPT learns no new preconditions
or objects: a situation that breaks no PDDL predicate ("the cup is dirty" for
fill_cup) goes unnoticed, which is what this baseline shows next to COWP.
The trial runs DKPROMPT's task loop on COWP's driver.
Mode: `context.options["dkprompt"]` = pre | post | both (default both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._driven import run_on_episode
from cowp_ros.bench.simulator import Episode
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.dkprompt.loop import DKPromptLoop, DKPromptMode
from cowp_ros.methods.dkprompt.questions import Answer, DKPromptChecker, Moment
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import ActionPhrases

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


class LatestObservation:
    """An `ImageSource` whose picture is the latest sentence the robot reported."""

    def __init__(self, latest: Callable[[], str | None]) -> None:
        self.latest = latest

    def image_for(self, attempt: int, step: PlanStep, moment: Moment) -> object | None:
        return self.latest()


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
        self.loop: DKPromptLoop | None = None

    def trace(self) -> list[str]:
        """DKPROMPT's narrative: every check, state change and plan."""
        if self.loop is None:
            return []
        return [f"{e.kind}: {e.text}" for e in self.loop.report.events]

    def run(self, episode: Episode) -> None:
        scene: list[DKPromptLoop] = []
        self.loop = DKPromptLoop(
            episode.problem,
            planner=self.context.planner,
            checker=self.checker,
            images=LatestObservation(lambda: scene[0].last_situation if scene else None),
            mode=self.mode,
            phrases=ActionPhrases(self.context.spec.phrases),
        )
        scene.append(self.loop)
        run_on_episode(self.loop, episode)


METHOD = DKPrompt
