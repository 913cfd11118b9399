"""Text from outside (a model's answer, a situation, a server's error) made safe to keep.

Such text reaches a terminal, a JSON report and the ROS feedback topic. An ANSI escape
in it can clear a screen or hide a line, a lone surrogate (what Python makes of bytes
that are not UTF-8) breaks every UTF-8 encoder downstream, and bidirectional overrides
make a printed line read differently from what it holds. `clean` removes all of them
once, where the text enters, so that nothing later has to remember to.
"""

from __future__ import annotations

import re

from cowp_ros.errors import CowpError

ANSI_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clears
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # two-character escapes
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def clean(text: str, *, newlines: bool = True) -> str:
    """`text` without escape sequences, control or bidi-override characters and lone
    surrogates (each becomes U+FFFD). Tabs become spaces; newlines stay unless
    `newlines` is False, when they become spaces too."""
    text = _SURROGATES.sub("\ufffd", text)
    text = ANSI_ESCAPE.sub("", text)
    text = text.replace("\t", " ")
    if not newlines:
        text = text.replace("\r", " ").replace("\n", " ")
    else:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text)


def is_clean(text: str) -> bool:
    """True when `clean` would change nothing (newlines allowed)."""
    return clean(text) == text.replace("\t", " ")


def clip(text: str, limit: int, mark: str = " [...]") -> str:
    """At most `limit` characters, marked where cut (for messages, never for data)."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(mark))] + mark


MAX_SITUATION_CHARS = 500
"""A situation is a sentence ("the cup is dirty"); the dataset's longest is under 100
characters. Longer text is refused, not cut: a cut sentence may say something else."""


def situation_text(raw: str) -> str:
    """A situation as the loop keeps it: clean, on one line, of bounded length.

    Escape and control characters are removed and bytes that were not UTF-8 become
    U+FFFD (`clean`), runs of white space one space. Raises `CowpError` for text too
    long, or with nothing left to say.
    """
    if len(raw) > 8 * MAX_SITUATION_CHARS:  # refuse before cleaning megabytes
        raise _too_long(len(raw))
    text = " ".join(clean(raw, newlines=False).split())
    if len(text) > MAX_SITUATION_CHARS:
        raise _too_long(len(text))
    if not text:
        raise CowpError("an empty situation was observed", hint="say what is wrong")
    return text


def _too_long(length: int) -> CowpError:
    return CowpError(
        f"a situation of {length:,} characters is too long (at most {MAX_SITUATION_CHARS})",
        hint='say what is wrong in one sentence, e.g. "the cup is dirty"',
    )
