"""The three COWP questions, worded in one place.

Prompt 1 (Plan Monitor): "Is it suitable for a robot to <step>, if <situation>?"
Prompt 2 (Knowledge Acquirer): "Is it suitable for a robot to <step with the candidate
object in the failed object's place>?", the form the original COWP used ("... fills a
cup with water from a measuring cup?").
Prompt 3 (selection): "There are some objects, such as a bowl, a mug. Which is the most
suitable to replace the cup in the task of <task>, if <situation>?"

The few-shot examples come from situations outside the six dataset tasks so that they
teach the answer format without leaking the benchmark's answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.reasoning.language_model import Example

MONITOR_SYSTEM = (
    "You are a household robot's commonsense checker. Given one step of the robot's plan "
    "and a situation, say whether the step can still be done well. Answer yes or no."
)
ACQUIRER_SYSTEM = (
    "You are a household robot's commonsense checker. Say whether the robot can sensibly "
    "do the action with the object named. Answer yes or no."
)
SELECTION_SYSTEM = (
    "You are a household robot's commonsense helper. Pick the one object from the list "
    "that best replaces the missing or unusable one. Answer with the object's name only."
)

MONITOR_EXAMPLES: tuple[Example, ...] = (
    Example("Is it suitable for a robot to grasp the knife, if the knife is rusty?", "No"),
    Example("Is it suitable for a robot to open the fridge, if the fridge is white?", "Yes"),
    Example("Is it suitable for a robot to heat the soup, if the stove is broken?", "No"),
    Example("Is it suitable for a robot to wipe the desk, if it is sunny outside?", "Yes"),
)
ACQUIRER_EXAMPLES: tuple[Example, ...] = (
    Example("Is it suitable for a robot to stir the soup with a chopstick?", "Yes"),
    Example("Is it suitable for a robot to stir the soup with a towel?", "No"),
)


def sentence(situation: str) -> str:
    """A situation as a clause: no trailing full stop, first letter lower-case."""
    text = " ".join(situation.strip().split()).rstrip(".!?")
    return text[:1].lower() + text[1:]


def monitor_question(step_text: str, situation: str) -> str:
    """Prompt 1."""
    return f"Is it suitable for a robot to {step_text}, if {sentence(situation)}?"


def acquirer_question(step_text_with_candidate: str) -> str:
    """Prompt 2 (the step already names the candidate object)."""
    return f"Is it suitable for a robot to {step_text_with_candidate}?"


def selection_question(
    candidates: Sequence[str], replaced: str, task_description: str, situation: str
) -> str:
    """Prompt 3; `candidates` and `replaced` are rendered nouns ("a bowl", "the cup")."""
    listed = ", ".join(candidates)
    return (
        f"There are some objects, such as {listed}. Which is the most suitable to replace "
        f"{replaced} in the task of {task_description}, if {sentence(situation)}?"
    )
