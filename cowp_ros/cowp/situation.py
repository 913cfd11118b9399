"""A situation as the loop receives it: the sentence, and what its source knew about it.

The camera's detector knows which object it watched ("the cup is missing" is about
`cup_1`) and how sure it is; a person typing a sentence knows neither. Whatever the
source knew travels with the text to the loop, so no model is asked to find the object
again when the source already said which it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from cowp_ros.safe_text import clean


@dataclass(frozen=True)
class Situation:
    """What the robot noticed.

    `text` is one English sentence ("the cup is dirty"). `object` names the object it is
    about when the source knows it: a PDDL object name (`cup_1`) or a kind (`cup`); ""
    when unknown. `confidence` is the source's (0..1; None when it gave none), `source`
    says who reported it (detector, sim, replay, operator, ...).
    """

    text: str
    object: str = ""
    confidence: float | None = None
    source: str = ""

    @classmethod
    def of(cls, situation: Situation | str) -> Situation:
        """A `Situation` from either a situation or a bare sentence, tidied: escapes and
        control characters removed, white space folded (how long a sentence may be is
        the loop's to check, `safe_text.situation_text`)."""
        given = situation if isinstance(situation, Situation) else cls(situation)
        text = " ".join(clean(given.text, newlines=False).split())
        obj = "_".join(clean(given.object, newlines=False).split()).lower()
        confidence = given.confidence
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            confidence = None  # a source's nonsense confidence is no confidence
        return cls(text, obj, confidence, given.source)
