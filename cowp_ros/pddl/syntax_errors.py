"""A PDDL file the parser refused, said as a person fixes it: the file, the line, what
is wrong there, never the parser's own words.

The `pddl` library parses with lark, whose errors name grammar terminals
("Unexpected token Token('EFFECT', ':effect') ... Expected one of: * RPAR") and point
where the parser noticed, often the next action. Most hand-written mistakes are a
parenthesis left open, so an error where a `)` was expected names the parenthesis that
was never closed, with its line; an unknown type is named with the types the domain
declares and the closest of them.
"""

from __future__ import annotations

import difflib
import re

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

_TERMINALS = {
    "RPAR": "')'",
    "LPAR": "'('",
    "NAME": "a name",
    "VARIABLE": "a variable (?x)",
    "TYPING_SEPARATOR": "'-'",
    "NUMBER": "a number",
}
_UNKNOWN_TYPE = re.compile(
    r"types? \[([^\]]*)\] of term (?:Variable|Constant)\((\w[\w-]*)\) are not in "
    r"available types \{([^}]*)\}"
)


def _terminal(name: str) -> str:
    if name in _TERMINALS:
        return _TERMINALS[name]
    if name.isupper() and name.isidentifier():
        return f"':{name.lower().replace('_', '-')}'"
    return repr(name)


def _open_before_keyword(text: str, line: int, column: int, keyword: str) -> tuple[int, str] | None:
    """The parenthesis left open before a `:keyword` that starts a part of its own (a
    section, an action's part), or None when the keyword stands where it may."""
    opened = _open_at(text, line, column)
    if opened and opened[-1][1].startswith("(" + keyword):
        opened.pop()  # the keyword's own parenthesis
    if not opened or opened[-1][1].startswith(("(define", "(:action", "(:derived")):
        return None
    return opened[-1]


def _unclosed(text: str, line: int, column: int) -> tuple[int, str] | None:
    """The innermost parenthesis still open at (`line`, `column`): its line and the text
    it starts (comments skipped)."""
    opened = _open_at(text, line, column)
    return opened[-1] if opened else None


def _open_at(text: str, line: int, column: int) -> list[tuple[int, str]]:
    """The parentheses still open at (`line`, `column`), outermost first."""
    opened: list[tuple[int, str]] = []
    for number, content in enumerate(text.splitlines()[:line], start=1):
        code = content.split(";", 1)[0]
        if number == line:
            code = code[: max(0, column - 1)]
        for index, char in enumerate(code):
            if char == "(":
                opened.append((number, content[index:].strip()))
            elif char == ")" and opened:
                opened.pop()
    return opened


def _snippet(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def explain(err: BaseException, text: str, where: str) -> str | None:
    """`err` in words, starting with `where` ("domain my/domain.pddl"); None when it is
    not an error this module knows (the caller keeps its own message)."""
    if isinstance(err, UnexpectedToken):
        token = getattr(err, "token", None)  # set by lark, not in its type stubs
        end = token is None or getattr(token, "type", "") == "$END"
        found = "the end of the file" if end else repr(str(token))
        expected = sorted({_terminal(name) for name in err.expected if name != "$END"})
        at = f"{where}, line {err.line}, column {err.column}"
        if "RPAR" in err.expected:
            open_paren = _unclosed(text, err.line, err.column)
            if open_paren is not None:
                opened_line, opened_text = open_paren
                return (
                    f"{at}: {found} where a ')' was expected: the parenthesis opened at "
                    f"line {opened_line} ({_snippet(opened_text)}) is not closed before it"
                )
        keyword = str(token) if token is not None else ""
        if keyword.startswith(":"):
            open_paren = _open_before_keyword(text, err.line, err.column, keyword.lower())
            if open_paren is not None:
                return (
                    f"{at}: {found} starts a new part, but the parenthesis opened at line "
                    f"{open_paren[0]} ({_snippet(open_paren[1])}) is not closed before it"
                )
        wanted = ", ".join(expected[:5]) + (" ..." if len(expected) > 5 else "")
        return f"{at}: {found} is not expected here" + (f" (expected {wanted})" if wanted else "")
    if isinstance(err, UnexpectedCharacters):
        char = str(getattr(err, "char", "?"))
        return f"{where}, line {err.line}, column {err.column}: {char!r} is not PDDL here"
    if isinstance(err, UnexpectedEOF):
        open_paren = _unclosed(text, len(text.splitlines()) + 1, 0)
        if open_paren is not None:
            return (
                f"{where}: the file ends before the parenthesis opened at line "
                f"{open_paren[0]} ({_snippet(open_paren[1])}) is closed"
            )
        return f"{where}: the file ends in the middle of a definition"
    match = _UNKNOWN_TYPE.search(str(err))
    if match:
        return _unknown_type(match, text, where)
    return None


def _unknown_type(match: re.Match[str], text: str, where: str) -> str:
    unknown = [name.strip(" '\"") for name in match.group(1).split(",") if name.strip()]
    term = match.group(2)
    declared = sorted(
        name.strip(" '\"") for name in match.group(3).split(",") if name.strip(" '\"")
    )
    name = unknown[0] if unknown else "?"
    line = next(
        (
            number
            for number, content in enumerate(text.lower().splitlines(), start=1)
            if re.search(rf"-\s*{re.escape(name)}(?![\w-])", content.split(";", 1)[0])
        ),
        None,
    )
    at = f"{where}, line {line}" if line else where
    close = difflib.get_close_matches(name, declared, n=1)
    guess = f"; did you mean '{close[0]}'?" if close else ""
    shown_term = term if term.startswith("?") else f"?{term}"
    return (
        f"{at}: unknown type '{name}' (of {shown_term}): the domain declares "
        f"{', '.join(declared)} in :types{guess}"
    )
