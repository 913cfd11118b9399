"""Plan steps in English, from per-action phrase rules held as data.

Each task's phrases live in `pddl/tasks.yaml` (`fill_cup: fill {0} with water from {1}`):
adding an action is adding a line, not a branch. Arguments are rendered from their
types ("cup_1" -> "the cup"), so an acquired variant (`fill_cup__cup_as_bowl`) reads
naturally with its base action's phrase: "fill the bowl with water from the faucet".
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence

from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning.result import PlanStep

INSTANCE_SUFFIX = re.compile(r"_\d+$")


def noun(type_name: str, article: str = "the") -> str:
    """`coffee_mug` -> `the coffee mug`; `article=""` gives the bare noun."""
    words = type_name.replace("_", " ").strip()
    if not article:
        return words
    if article == "a" and words[:1] in "aeiou":
        article = "an"
    return f"{article} {words}"


def object_type(name: str, task: PlanningTask | None) -> str:
    """The type of an object (from the task), else its name without `_<n>`."""
    if task is not None and name in task.objects:
        return task.objects[name]
    return INSTANCE_SUFFIX.sub("", name)


MAX_TEMPLATE_LENGTH = 500
MAX_FIELD_INDEX = 32


def check_template(action: str, template: str) -> None:
    """Refuse a phrase template that is more than words and plain `{N}` fields.

    A format spec (`{0:>20000000}` pads to 20 MB), a conversion (`{0!r}`), an attribute
    or an index (`{0.__class__}`, `{0[0]}`) or a nested field would let a template
    from a file or a remote request print, send or store far more than it says.
    """
    if len(template) > MAX_TEMPLATE_LENGTH:
        raise CowpError(
            f"phrase for {action!r} is {len(template):,} characters, over the limit of "
            f"{MAX_TEMPLATE_LENGTH}"
        )
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as err:  # an unmatched brace
        raise CowpError(f"phrase for {action!r} is not a template: {err}") from None
    for _, field_name, spec, conversion in fields:
        if field_name is None:
            continue
        plain = field_name.isascii() and field_name.isdigit()
        if not plain or spec or conversion or int(field_name) > MAX_FIELD_INDEX:
            shown = "{" + field_name + (f"!{conversion}" if conversion else "")
            shown += (f":{spec}" if spec else "") + "}"
            raise CowpError(
                f"phrase for {action!r} uses {shown[:60]}; use {{0}}, {{1}}, ...: only "
                "plain fields are allowed (no format spec, conversion or attribute)"
            )


class ActionPhrases:
    """Phrase rules for one task: action name -> template over `{0}`, `{1}`, ..."""

    def __init__(self, phrases: Mapping[str, str]) -> None:
        self.phrases = dict(phrases)
        for action, template in self.phrases.items():
            check_template(action, template)

    def phrase(self, action: str, nouns: Sequence[str]) -> str:
        """English for `action` applied to already-rendered nouns."""
        template = self.phrases.get(base_action_name(action))
        if template is None:
            # No rule: say the action's own words and its arguments; still readable.
            words = base_action_name(action).replace("_", " ")
            return f"{words} {' and '.join(nouns)}".strip()
        try:
            return template.format(*nouns)
        except IndexError:
            raise CowpError(
                f"phrase {template!r} for {action!r} names more arguments than the "
                f"{len(nouns)} the action has"
            ) from None

    def describe(self, step: PlanStep, task: PlanningTask | None = None) -> str:
        """`(fill_cup cup_1 faucet_1)` -> `fill the cup with water from the faucet`."""
        return self.phrase(step.action, [noun(object_type(a, task)) for a in step.args])

    def describe_with(
        self, action: str, arg_types: Sequence[str], replaced: int, replacement_type: str
    ) -> str:
        """An action with one argument's type replaced by a candidate ("a bowl").

        The candidate gets the indefinite article: the question is about bowls in
        general ("fill a bowl with water from the faucet"), not one particular bowl.
        """
        nouns = [
            noun(replacement_type, "a") if i == replaced else noun(t)
            for i, t in enumerate(arg_types)
        ]
        return self.phrase(action, nouns)
