"""DKPROMPT as a registered method: its task loop, asking a vision model or the text one.

`dkprompt` (`cowp run --method dkprompt`, `cowp bench --methods dkprompt`) runs
`DKPromptLoop`: before a step its PDDL preconditions are asked, after it its effects;
the answers update the state, and a mismatch replans. DKPROMPT learns no new
preconditions or objects: a situation that breaks no PDDL predicate ("the cup is dirty"
for fill_cup) goes unnoticed, which is what this baseline shows next to COWP.

What it asks depends on the options (`registry.build_loop(options=...)`):

- `IMAGES` (an `ImageSource`, e.g. `ImageDirectory`) and `VISION` (a
  `VisualQuestioner`, e.g. an OpenAI-compatible vision server): the questions go to the
  vision model about the camera image before and after each step (`cowp run
  --dkprompt MODE --images DIR --vlm-url URL`); no text model is needed.
- without them: the questions go to the text model with the latest situation the robot
  reported as the scene ("The robot sees: the cup is dirty. Is the robot holding the cup
  in its gripper?"); without a situation yet nothing is asked (as with no image). This
  is how the benchmark's text world runs it.
- `MODE`: `pre`, `post` or `both` (default), the paper's ablations.

It has no reasoners at COWP's ports and cannot run on the ROS graph (`off_graph`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.dkprompt.loop import DKPromptLoop, DKPromptMode, ImageSource
from cowp_ros.methods.dkprompt.questions import Answer, DKPromptChecker, Moment, VisualQuestioner
from cowp_ros.methods.registry import LoopParts, MethodEntry, register
from cowp_ros.planning import PlanStep

DKPROMPT_NAME = "dkprompt"
MODE = "dkprompt.mode"
"""Option: `pre`, `post` or `both` (the default)."""
IMAGES = "dkprompt.images"
"""Option: the `ImageSource` of the camera's pictures (with `VISION`)."""
VISION = "dkprompt.vision"
"""Option: the `VisualQuestioner` that answers about the pictures (with `IMAGES`)."""

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


def dkprompt_loop(parts: LoopParts) -> DKPromptLoop:
    """DKPROMPT's loop over the planner of `parts`, asking what the options say."""
    images = parts.options.get(IMAGES)
    vision = parts.options.get(VISION)
    scene: list[DKPromptLoop] = []
    if images is not None and vision is not None:
        questioner = _checked(vision, "ask", VISION)
        source = _checked(images, "image_for", IMAGES)
    else:
        questioner = TextObservationQuestioner(parts.needs_model("DKPROMPT"))
        source = LatestObservation(lambda: scene[0].last_situation if scene else None)
    loop = DKPromptLoop(
        parts.task,
        planner=parts.planner,
        checker=DKPromptChecker(cast(VisualQuestioner, questioner)),
        images=cast(ImageSource, source),
        mode=DKPromptMode.parse(str(parts.options.get(MODE, "both"))),
        phrases=parts.phrases,
        planner_timeout_s=parts.settings.planner_timeout_s,
    )
    scene.append(loop)
    loop.report.task = parts.task_name or loop.report.task
    loop.report.description = parts.description
    return loop


def _checked(value: object, method: str, option: str) -> object:
    """`value`, when it has the port's `method` (a clear error when it does not)."""
    if not callable(getattr(value, method, None)):
        raise TypeError(f"{option} has no {method}(): {value!r}")
    return value


DKPROMPT = register(
    MethodEntry(
        name=DKPROMPT_NAME,
        label="DKPROMPT",
        summary="DKPROMPT: ask each step's preconditions/effects about the observation; replan",
        loop=dkprompt_loop,
        off_graph="DKPROMPT asks a model about each step inside the loop, and on the graph "
        "the loop runs in the task manager, which has no model (the vlm_checker node asks "
        "its questions of the wrist camera and reports what it sees as situations)",
    )
)
