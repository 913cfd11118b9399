"""The three COWP questions, worded in one place.

Prompt 1 (Plan Monitor): "Is it suitable for a robot to <step>, if <situation>?"
Prompt 2 (Knowledge Acquirer): "Is it suitable for a robot to <step with the candidate
object in the failed object's place>?", the form the original COWP used ("... fills a
cup with water from a measuring cup?"). Before it, the role question: "Can a bowl be
used instead of the cup, in the task of <task>?" (see `acquirer.py` for why).
Prompt 3 (selection): "There are some objects, such as a bowl, a mug. Which is the most
suitable to replace the cup in the task of <task>, if <situation>?"

The few-shot examples come from situations outside the six dataset tasks so that they
teach the answer format without leaking the benchmark's answers. Tests never assert a
real model's answers; `benchmarks/` measures them.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.wording import sentence
from cowp_ros.llm.language_model import Example

MONITOR_SYSTEM: str | None = None
"""None: the client's own commonsense system prompt. Measured with Qwen2.5-Coder-1.5B on
probe questions ("fill the cup ..., if the cup is dirty / blue"), a monitor-specific
system prompt made the model answer "no" to everything, or, with other examples, "yes"
to everything; the shared prompt kept the two apart best (and keeps the server's prompt
cache warm across kinds of question)."""
ACQUIRER_SYSTEM: str | None = None
SELECTION_SYSTEM = (
    "You are a household robot's commonsense helper. Pick the one object from the list "
    "that best replaces the missing or unusable one. Answer with the object's name only."
)

COMMONSENSE_EXAMPLES: tuple[Example, ...] = (
    Example("Is it suitable for a robot to open a drawer, if the drawer is locked?", "No"),
    Example("Is it suitable for a robot to open a drawer, if the drawer is blue?", "Yes"),
    Example("Is it suitable for a robot to cut bread with a spoon?", "No"),
    Example("Is it suitable for a robot to cut bread with a bread knife?", "Yes"),
    Example("Is it suitable for a robot to water a plant, if the watering can is empty?", "No"),
)
"""Contrastive pairs (a situation that blocks the step and one that does not; an object
that can do the job and one that cannot), from tasks outside the COWP dataset so that
they teach the distinction without leaking the benchmark's answers. Used for Prompts 1
and 2: on the probe questions they separated blocking from harmless situations better
than monitor-only examples, which made the small model say "yes" to a dirty cup."""
MONITOR_EXAMPLES = COMMONSENSE_EXAMPLES
ACQUIRER_EXAMPLES = COMMONSENSE_EXAMPLES


def monitor_question(step_text: str, situation: str) -> str:
    """Prompt 1."""
    return f"Is it suitable for a robot to {step_text}, if {sentence(situation)}?"


def acquirer_question(step_text_with_candidate: str) -> str:
    """Prompt 2 (the step already names the candidate object)."""
    return f"Is it suitable for a robot to {step_text_with_candidate}?"


ROLE_EXAMPLES: tuple[Example, ...] = (
    Example("Can a mug be used instead of the cup, in the task of making tea?", "Yes"),
    Example("Can a sponge be used instead of the cup, in the task of making tea?", "No"),
    Example("Can a spoon be used instead of the knife, in the task of cutting bread?", "No"),
    Example("Can a laptop be used instead of the book, in the task of reading a recipe?", "Yes"),
    Example("Can a shoe be used instead of the plate, in the task of serving a cake?", "No"),
)
"""Few-shot pairs for the role question, from tasks outside the benchmark's."""


def role_question(candidate: str, replaced: str, task_description: str) -> str:
    """The role question; `candidate` and `replaced` are rendered nouns ("a bowl")."""
    return f"Can {candidate} be used instead of {replaced}, in the task of {task_description}?"


def selection_question(
    candidates: Sequence[str], replaced: str, task_description: str, situation: str
) -> str:
    """Prompt 3; `candidates` and `replaced` are rendered nouns ("a bowl", "the cup")."""
    listed = ", ".join(candidates)
    return (
        f"There are some objects, such as {listed}. Which is the most suitable to replace "
        f"{replaced} in the task of {task_description}, if {sentence(situation)}?"
    )


NORMAL_STATE = "everything is as usual"
"""The situation of the contrast (reference) question: the same step in the normal state.
The dataset's `situation_opposite` exists only for its own reports; a robot at run time
has just the sentence it observed, so the reference must be generic to be usable."""

PREVENTS_EXAMPLES: tuple[Example, ...] = (
    Example("Would it stop a robot from opening a drawer, if the drawer is locked?", "Yes"),
    Example("Would it stop a robot from opening a drawer, if the drawer is blue?", "No"),
    Example("Would it stop a robot from watering a plant, if the watering can is empty?", "Yes"),
    Example("Would it stop a robot from watering a plant, if it is sunny outside?", "No"),
)
"""The contrastive pairs of COMMONSENSE_EXAMPLES, asked the other way round: here "yes"
means the step is blocked, which counters a small model's lean towards "yes"."""


def prevents_question(step_text: str, situation: str) -> str:
    """Prompt 1 inverted: does the situation stop the step? ("yes" = blocked)."""
    return f"Would it stop a robot from being able to {step_text}, if {sentence(situation)}?"
