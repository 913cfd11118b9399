"""How the loop words situations and reads which kind of object they name.

Shared by the loop, its narration and every method: a situation as a clause
("the cup is dirty"), the words of a sentence, and the first object or kind it names.
"""

from __future__ import annotations

import re

from cowp_ros.pddl import PlanningTask


def sentence(situation: str) -> str:
    """A situation as a clause: no trailing full stop, first letter lower-case."""
    text = " ".join(situation.strip().split()).rstrip(".!?")
    return text[:1].lower() + text[1:]


def words_of(text: str) -> list[str]:
    """Lower-case words of letters and digits; everything else separates words."""
    return re.findall(r"[a-z0-9]+", text.lower())


def find_mention(words: list[str], task: PlanningTask) -> tuple[int, int, str] | None:
    """(start, length, object or type) of the first known object or type in `words`.

    Longer names win at the same position ("coffee mug" before "mug"); an exact object
    name ("cup 2" or "cup_2") wins over its type.
    """
    names: list[tuple[list[str], str]] = []
    for obj in task.objects:
        names.append((obj.split("_"), obj))
    for type_name in task.types:
        names.append((type_name.split("_"), type_name))
    names.sort(key=lambda entry: -len(entry[0]))
    for start in range(len(words)):
        for parts, name in names:
            if words[start : start + len(parts)] == parts:
                return start, len(parts), name
    return None


def mentioned_kind(situation: str, task: PlanningTask) -> str | None:
    """The type of the first object or type a sentence names ("the cup is dirty": cup)."""
    mention = find_mention(words_of(situation), task)
    if mention is None:
        return None
    name = mention[2]
    return task.objects.get(name, name)
