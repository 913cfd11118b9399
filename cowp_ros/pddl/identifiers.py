"""The identifier grammar every name must pass before it is written into PDDL.

Names reach PDDL from three places: our own domain files, the user (a task name, an
object name) and the language model (a predicate for a situation, a candidate object).
The last two are untrusted text. A name that passes `check_identifier` is a plain
lower-case word with underscores: it cannot open or close a parenthesis, start a
variable (`?`), a keyword (`:`) or a comment (`;`), and it is not a PDDL keyword, so it
can only ever be read back as the one name we meant.
"""

from __future__ import annotations

import re

from cowp_ros.errors import CowpError

IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")
MAX_IDENTIFIER_LENGTH = 100

# Characters that carry PDDL syntax; an answer holding any of them is refused outright
# rather than "cleaned", because a cleaned injection is still an injection.
PDDL_SYNTAX = re.compile(r"[()?:;\"'`\\{}\[\]]")

RESERVED_WORDS = frozenset(
    {
        "define",
        "domain",
        "problem",
        "and",
        "or",
        "not",
        "imply",
        "exists",
        "forall",
        "when",
        "either",
        "object",
        "increase",
        "decrease",
        "assign",
        "at",
        "over",
        "all",
        "start",
        "end",
    }
)


class UnsafeIdentifierError(CowpError):
    """Text that was meant to become a PDDL name and is not a safe one."""


def has_pddl_syntax(text: str) -> bool:
    """True when `text` holds a character that means something in PDDL syntax."""
    return bool(PDDL_SYNTAX.search(text))


def check_identifier(text: str, what: str) -> str:
    """Return `text` when it is a safe PDDL name, else raise `UnsafeIdentifierError`.

    `what` says what the name was for ("predicate", "object") so that the message tells a
    person which answer was refused and why.
    """
    shown = text if len(text) <= 80 else text[:77] + "..."
    if has_pddl_syntax(text):
        raise UnsafeIdentifierError(
            f"refused {what} {shown!r}: it contains PDDL syntax",
            hint="names may only hold lower-case letters, digits and underscores",
        )
    if len(text) > MAX_IDENTIFIER_LENGTH:
        raise UnsafeIdentifierError(
            f"refused {what} {shown!r}: longer than {MAX_IDENTIFIER_LENGTH} characters"
        )
    if not IDENTIFIER.fullmatch(text):
        raise UnsafeIdentifierError(
            f"refused {what} {shown!r}: not a name of lower-case letters, digits and "
            "underscores starting with a letter"
        )
    if text in RESERVED_WORDS:
        raise UnsafeIdentifierError(f"refused {what} {text!r}: it is a PDDL keyword")
    return text
