"""Text from outside (a model's answer, a situation, a server's error) made safe to keep.

Such text reaches a terminal, a JSON report and the ROS feedback topic. An ANSI escape
in it can clear a screen or hide a line, a lone surrogate (what Python makes of bytes
that are not UTF-8) breaks every UTF-8 encoder downstream, and bidirectional overrides
make a printed line read differently from what it holds. `clean` removes all of them
once, where the text enters, so that nothing later has to remember to.
"""

from __future__ import annotations

import re

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
