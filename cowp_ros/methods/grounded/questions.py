"""The grounded monitor's questions: their words, and the one set of examples they share.

A small model answers "can the robot still use the cup for filling it with water, if
the cup is dirty?" with a confident "yes": one question about an object's use weighs
every way a situation can spoil it at once, and dirt loses. So the decision is split
into the object's functions, each a question a 1.5B model answers reliably with one
token:

- **use**: can the robot still use the object for the task, given the situation?
  (broken, missing, locked, out of reach, leaking: the object cannot do its job);
- **state**: given the situation, is the object dirty? (the model answers this about
  what it was told, not about what the task needs);
- **need**: does the task need the object clean? asked once per role and task, not
  per situation ("for setting a table to eat, must the plate be clean?" yes; "for
  putting a dirty plate into the sink, must the plate be clean?" no);
- **task**: can the robot still go on with the task, given a situation that names no
  object present?

Every question is asked after the same instructions and examples (`EXAMPLES`), so a
server that keeps its last prompt (llama.cpp's prompt cache, one slot) reads that
prefix once: `warm` has it read before the first situation, and each question then
costs only its own words. The examples come from household tasks outside the
benchmark's, in contrastive pairs (the same object once spoiled, once not).
"""

from __future__ import annotations

from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.methods.paper.prompts import sentence

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
"""Use: the same object and task, once with a situation that spoils it, once not."""

STATE_EXAMPLES: tuple[Example, ...] = (
    Example("The bowl has mould in it. Is the bowl dirty?", "Yes"),
    Example("The bowl has soup in it. Is the bowl dirty?", "No"),
    Example("The towel has mud on it. Is the towel dirty?", "Yes"),
    Example("The towel has a stripe on it. Is the towel dirty?", "No"),
    Example("The jar is cracked. Is the jar dirty?", "No"),
    Example("The spoon is sticky with old jam. Is the spoon dirty?", "Yes"),
)
"""State: contrastive pairs of the same form ("has ... in it", "has ... on it"), once
dirt and once not, and a defect that is not dirt: what is in or on an object is not
dirt by itself."""

NEED_EXAMPLES: tuple[Example, ...] = (
    Example("For serving the soup, must the ladle be clean?", "Yes"),
    Example("For storing the socks, must the drawer be clean?", "No"),
    Example("For making tea, must the kettle be clean?", "Yes"),
    Example("For taking the rubbish out, must the bin be clean?", "No"),
    Example("For washing the muddy boots, must the boots be clean?", "No"),
)
"""Need: roles that touch what people eat or drink, and roles that do not, nor a task
whose work is the dirt itself."""

TASK_EXAMPLES: tuple[Example, ...] = (
    Example("Can the robot still go on with watering the plants, if the radio is on?", "Yes"),
    Example(
        "Can the robot still go on with watering the plants, if there is no water in the house?",
        "No",
    ),
    Example("Can the robot still go on with making tea, if it is snowing outside?", "Yes"),
    Example("Can the robot still go on with making tea, if the robot's arm is broken?", "No"),
)
"""Task: situations about the world rather than one object."""

EXAMPLES: tuple[Example, ...] = (
    *USE_EXAMPLES,
    *STATE_EXAMPLES,
    *NEED_EXAMPLES,
    *TASK_EXAMPLES,
)
"""The prefix every question of the monitor shares (see the module docstring)."""


def use_question(object_noun: str, task_description: str, situation: str) -> str:
    """Can the object still do its job in the task?"""
    return (
        f"Can the robot still use {object_noun} for {task_description}, if {sentence(situation)}?"
    )


def state_question(object_noun: str, situation: str) -> str:
    """Is the object dirty, as the situation says? (the situation first: it is what the
    model judges, and the question then reads as a check of the sentence)."""
    told = sentence(situation)
    return f"{told[:1].upper()}{told[1:]}. Is {object_noun} dirty?"


def need_question(object_noun: str, task_description: str) -> str:
    """Does the task need the object clean? (once per role and task)"""
    return f"For {task_description}, must {object_noun} be clean?"


def task_question(task_description: str, situation: str) -> str:
    """Can the task go on, given a situation that names no object present?"""
    return f"Can the robot still go on with {task_description}, if {sentence(situation)}?"


def warm(model: LanguageModel) -> None:
    """Have the model's server read the questions' shared prefix now, so that the first
    situation of a run costs only its own words. A model without a `warm` method (a
    scripted double, an answer cache) is left alone."""
    warm_prefix = getattr(model, "warm", None)
    if callable(warm_prefix):
        warm_prefix(examples=EXAMPLES)
