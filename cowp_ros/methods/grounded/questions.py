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
  per situation ("for making tea, must the kettle be clean?" yes; "for taking the
  rubbish out, must the bin be clean?" no); first whether the task's own words call
  the object dirty (the state question about the task alone: "Task: putting a dirty
  plate into the sink. Is the plate dirty?"): a task that expects the dirt does not
  need the object clean, and the need is then not asked;
- **task**: can the robot still go on with the task, given a situation that names no
  object present?

Every question has the same shape, the task first, then the situation, then what is
asked: "Task: setting a table to eat steak. The plate is white. Is the plate dirty?".
A server that keeps its last prompt (llama.cpp's prompt cache, one slot) then reads
the shared part once: the instructions and examples (`EXAMPLES`) and the task's words
are read by `warm` before the first situation; the use question reads the situation;
the state question that follows it shares all of that and costs only its last words.
The examples come from household tasks outside the benchmark's, in contrastive pairs
(the same object and task, once spoiled, once not).
"""

from __future__ import annotations

from cowp_ros.llm.client import WARM_QUESTION
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.methods.paper.prompts import sentence


def told(situation: str) -> str:
    """A situation as a sentence of its own: first letter upper-case, no full stop."""
    clause = sentence(situation)
    return f"{clause[:1].upper()}{clause[1:]}"


def task_clause(task_description: str) -> str:
    """The words every question of a task starts with (read once per run)."""
    return f"Task: {task_description}."


def use_question(object_noun: str, task_description: str, situation: str) -> str:
    """Can the object still do its job in the task?"""
    return (
        f"{task_clause(task_description)} {told(situation)}. "
        f"Can the robot still use {object_noun} for the task?"
    )


def state_question(object_noun: str, task_description: str, situation: str) -> str:
    """Is the object dirty, as the situation says? (it shares the use question's words
    up to its own last ones)"""
    return f"{task_clause(task_description)} {told(situation)}. Is {object_noun} dirty?"


def need_question(object_noun: str, task_description: str) -> str:
    """Does the task need the object clean? (once per role and task; its own form: on
    the dev roles it separates better than the task-first one, and it is asked too
    seldom for the shared words to matter)"""
    return f"For {task_description}, must {object_noun} be clean?"


def task_state_question(object_noun: str, task_description: str) -> str:
    """Do the task's own words call the object dirty? ("putting a dirty plate into the
    sink": dirt on the plate is what the task expects, not news)"""
    return f"{task_clause(task_description)} Is {object_noun} dirty?"


RESTATE_ASKS = "Say it plainly: what is"
"""The words that ask for a restatement (a stand-in restater finds its question by them)."""


def restate_question(object_noun: str, task_description: str, situation: str) -> str:
    """What the situation leaves the object like, said plainly ("The cup is dirty."):
    the same state in other words comes back in the same few words, so the questions
    that follow read one form, not the sentence's own wording."""
    return (
        f"{task_clause(task_description)} {told(situation)}. {RESTATE_ASKS} {object_noun} like now?"
    )


def restated(situation: str, restatement: str) -> str:
    """The situation, then what it leaves the object like, as the questions read it
    ("the cup has not been washed since breakfast: the cup is dirty")."""
    plain = restatement.strip().rstrip(".").strip()
    if not plain:
        return situation
    return f"{sentence(situation)}: {plain[:1].lower()}{plain[1:]}"


def task_question(task_description: str, situation: str) -> str:
    """Can the task go on, given a situation that names no object present?"""
    return (
        f"{task_clause(task_description)} {told(situation)}. "
        "Can the robot still go on with the task?"
    )


def use_example(task: str, obj: str, situation: str, answer: str) -> Example:
    """An example of the use question: the situation and the answer that fits it."""
    return Example(use_question(obj, task, situation), answer)


def state_example(task: str, obj: str, situation: str, answer: str) -> Example:
    """An example of the dirt question: the situation and the answer that fits it."""
    return Example(state_question(obj, task, situation), answer)


USE_EXAMPLES: tuple[Example, ...] = (
    use_example("storing the socks", "the drawer", "the drawer is locked", "No"),
    use_example("storing the socks", "the drawer", "the drawer is blue", "Yes"),
    use_example("boiling water for tea", "the kettle", "the kettle is leaking", "No"),
    use_example("boiling water for tea", "the kettle", "the kettle is made of steel", "Yes"),
    use_example("drying the dishes", "the towel", "a cat is sleeping on the sofa", "Yes"),
    use_example("drying the dishes", "the towel", "the towel is soaking wet", "No"),
)
"""Use: the same object and task, once with a situation that spoils it, once not."""

STATE_EXAMPLES: tuple[Example, ...] = (
    state_example("serving the soup", "the bowl", "the bowl has mould in it", "Yes"),
    state_example("serving the soup", "the bowl", "the bowl has soup in it", "No"),
    state_example("drying the dishes", "the towel", "the towel has mud on it", "Yes"),
    state_example("drying the dishes", "the towel", "the towel has a stripe on it", "No"),
    state_example("storing the jam", "the jar", "the jar is cracked", "No"),
    state_example("stirring the tea", "the spoon", "the spoon is sticky with old jam", "Yes"),
)
"""State: contrastive pairs of the same form ("has ... in it", "has ... on it"), once
dirt and once not, and a defect that is not dirt: what is in or on an object is not
dirt by itself."""

NEED_EXAMPLES: tuple[Example, ...] = (
    Example(need_question("the ladle", "serving the soup"), "Yes"),
    Example(need_question("the drawer", "storing the socks"), "No"),
    Example(need_question("the kettle", "making tea"), "Yes"),
    Example(need_question("the bin", "taking the rubbish out"), "No"),
    Example(need_question("the boots", "washing the muddy boots"), "No"),
)
"""Need: roles that touch what people eat or drink, and roles that do not, nor a task
whose work is the dirt itself."""

TASK_EXAMPLES: tuple[Example, ...] = (
    Example(task_question("watering the plants", "the radio is on"), "Yes"),
    Example(task_question("watering the plants", "there is no water in the house"), "No"),
    Example(task_question("making tea", "it is snowing outside"), "Yes"),
    Example(task_question("making tea", "the robot's arm is broken"), "No"),
)
"""Task: situations about the world rather than one object."""


def _restate(task: str, obj: str, situation: str, answer: str) -> Example:
    return Example(restate_question(obj, task, situation), answer)


RESTATE_EXAMPLES: tuple[Example, ...] = (
    _restate(
        "storing the socks",
        "the drawer",
        "nobody can pull the drawer open",
        "The drawer cannot be opened.",
    ),
    _restate(
        "storing the socks",
        "the drawer",
        "a small flower is painted on the front of the drawer",
        "The drawer is decorated.",
    ),
    _restate(
        "boiling water for tea",
        "the kettle",
        "water drips from the bottom of the kettle",
        "The kettle is leaking.",
    ),
    _restate(
        "boiling water for tea",
        "the kettle",
        "the power to the kitchen has been cut",
        "The kettle cannot be switched on.",
    ),
    _restate(
        "boiling water for tea",
        "the kettle",
        "the lid of the kettle has a tiny scratch",
        "The kettle is slightly scratched.",
    ),
    _restate(
        "serving the soup",
        "the bowl",
        "nobody has rinsed the bowl since lunch",
        "The bowl is dirty.",
    ),
    _restate(
        "serving the soup", "the bowl", "the bowl holds three spoons and a lid", "The bowl is full."
    ),
    _restate(
        "serving the soup",
        "the bowl",
        "nobody can find the bowl in the kitchen",
        "The bowl is missing.",
    ),
    _restate(
        "drying the dishes", "the towel", "a cat is sleeping on the sofa", "The towel is unchanged."
    ),
)
"""Restatement: a failed action said as the state it shows, dirt said as its cause, a
container's contents said as a list, a cause elsewhere said as what it does to the
object, and remarks that change nothing (a pattern, a scratch, a scene elsewhere) said
as just that: the fixed form keeps what matters and drops how it was said."""

EXAMPLES: tuple[Example, ...] = (
    *USE_EXAMPLES,
    *STATE_EXAMPLES,
    *NEED_EXAMPLES,
    *TASK_EXAMPLES,
)
"""The prefix every question of the monitor shares (see the module docstring)."""

RESTATED_EXAMPLES: tuple[Example, ...] = (*EXAMPLES, *RESTATE_EXAMPLES)
"""The shared prefix of a monitor that restates situations first: the restatement's
examples after the others, so that every question still shares one prefix (a server
with one prompt cache reads it once)."""


def examples_for(restate: bool) -> tuple[Example, ...]:
    """The shared prefix of a monitor that does (or does not) restate situations."""
    return RESTATED_EXAMPLES if restate else EXAMPLES


def warm(
    model: LanguageModel, task_description: str = "", examples: tuple[Example, ...] = EXAMPLES
) -> None:
    """Have the model's server read the questions' shared prefix now (the examples, and
    the task's words when known), so that the first situation of a run costs only its
    own words. A model without a `warm` method (a scripted double, an answer cache) is
    left alone."""
    warm_prefix = getattr(model, "warm", None)
    if not callable(warm_prefix):
        return
    if task_description:
        warm_prefix(examples=examples, question=f"{task_clause(task_description)} {WARM_QUESTION}")
    else:
        warm_prefix(examples=examples)
