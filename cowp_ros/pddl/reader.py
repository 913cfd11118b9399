"""PDDL text made readable by the `pddl` library the way planners read it.

Users bring domains written for Fast Downward or pyperplan, not for this project. Those
planners read PDDL case-insensitively (Fast Downward lowercases every token), ignore
what `:requirements` forgets to declare, and accept a type listed under two parents
(`area - object` and `area - surface` in IPC's storage). The `pddl` library, which holds
our model, is stricter on all three. So before it parses, the text is normalised here,
keeping every line where it was so that its errors still point at the user's line:

- comments are blanked and every token lowercased;
- constructs outside the fragment this project plans with (Fast Downward's classical
  one: STRIPS, typing, negation, equality, ADL conditions and effects, action costs)
  are refused with the construct and its line, never with a parser's stack trace;
- the `:types` list is rewritten with one parent per type (a second parent that is
  an ancestor of the first adds nothing), `object` itself not declared as a type;
- requirements the text uses but does not declare are added for the library and
  remembered as `hidden`, so that the PDDL we write back declares what the user wrote;
  `:numeric-fluents` (or `:fluents`) declared for action costs alone is hidden too,
  since Fast Downward refuses the declaration (IPC's cave-diving has it).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cowp_ros.errors import CowpError
from cowp_ros.limits import MAX_TYPE_DEPTH, MAX_TYPES, LimitError

ROOT_TYPE = "object"


class PddlSyntaxError(CowpError):
    """PDDL this project cannot read, with the construct and the line that say why."""


@dataclass(frozen=True)
class Token:
    """One token of PDDL text: `(`, `)` or a word, where it starts."""

    text: str
    start: int
    line: int


@dataclass(frozen=True)
class Normalized:
    """Text the `pddl` library reads, and the requirements added for it alone."""

    text: str
    hidden_requirements: frozenset[str] = frozenset()


UNSUPPORTED = {
    ":durative-action": "durative actions (temporal PDDL)",
    ":process": "processes (PDDL+)",
    ":event": "events (PDDL+)",
    ":constraints": "state-trajectory constraints (PDDL3)",
    "preference": "preferences (PDDL3)",
    "oneof": "non-deterministic effects (oneof)",
    "assign": "numeric effects (assign)",
    "decrease": "numeric effects (decrease)",
    "scale-up": "numeric effects (scale-up)",
    "scale-down": "numeric effects (scale-down)",
    "<": "numeric conditions (<)",
    ">": "numeric conditions (>)",
    "<=": "numeric conditions (<=)",
    ">=": "numeric conditions (>=)",
    "probabilistic": "probabilistic effects",
}
"""Heads of forms (the word after `(`, or a section keyword) outside the fragment."""

IMPLIED = (
    ":strips",
    ":typing",
    ":negative-preconditions",
    ":disjunctive-preconditions",
    ":equality",
    ":existential-preconditions",
    ":universal-preconditions",
    ":conditional-effects",
)
"""Requirements Fast Downward never asks for and the `pddl` library does: added for
the library when the text does not declare them (`hidden`)."""

_TOKEN = re.compile(r"[()]|[^\s()]+")
_CANDIDATE = re.compile(
    "(?<![^\\s()])(?:"
    + "|".join(re.escape(w) for w in sorted([*UNSUPPORTED, "increase"], key=len, reverse=True))
    + ")(?![^\\s()])"
)
"""A whole token that `_refuse_unsupported` may refuse."""


def blank_comments(text: str) -> str:
    """`text` with every `; comment` replaced by spaces (positions and lines kept)."""
    return re.sub(r";[^\n]*", lambda m: " " * len(m.group(0)), text)


def tokens(text: str) -> Iterator[Token]:
    """The tokens of comment-free text, each with its 1-based line."""
    line, last = 1, 0
    for match in _TOKEN.finditer(text):
        line += text.count("\n", last, match.start())
        last = match.start()
        yield Token(match.group(0), match.start(), line)


def normalize_domain(text: str, source: str) -> Normalized:
    """A domain's text as the `pddl` library reads it (see the module docstring)."""
    clean = blank_comments(text).lower()
    toks = list(tokens(clean))
    _refuse_unsupported(toks, source)
    clean = _rewrite_types(clean, toks, source)
    toks = list(tokens(clean))
    return _add_requirements(clean, toks, source)


def normalize_problem(text: str, source: str) -> str:
    """A problem's text as the `pddl` library reads it.

    A problem is most of a large task's text (IPC's nomystery: 110 KB of facts), so
    its words are not made tokens one by one: a pattern finds the few that may be
    refused (`_refuse_unsupported` judges those as it judges every domain token)."""
    clean = blank_comments(text).lower()
    line, last = 1, 0
    for match in _CANDIDATE.finditer(clean):
        line += clean.count("\n", last, match.start())
        last = match.start()
        before = match.start() - 1
        while before >= 0 and clean[before].isspace():
            before -= 1
        context = [Token(clean[before] if before >= 0 else "", before, line)]
        context.append(Token(match.group(0), match.start(), line))
        for word in itertools.islice(_TOKEN.finditer(clean, match.end()), 3):
            below = line + clean.count("\n", match.start(), word.start())
            context.append(Token(word.group(0), word.start(), below))
        _judge(context, 1, source)
    return clean


def _refuse_unsupported(toks: list[Token], source: str) -> None:
    for index in range(len(toks)):
        _judge(toks, index, source)


def _judge(toks: list[Token], index: int, source: str) -> None:
    """Refuse `toks[index]` when it heads a construct outside the fragment (the token
    before it and the three after it say)."""
    tok = toks[index]
    after_paren = index > 0 and toks[index - 1].text == "("
    what = UNSUPPORTED.get(tok.text)
    if what and (after_paren or tok.text.startswith(":")):
        raise PddlSyntaxError(
            f"{source}, line {tok.line}: ({tok.text} ...) is {what}, which this "
            "project does not plan with",
            hint="classical PDDL plans here: STRIPS, typing, negation, equality, "
            "quantified and conditional formulas, action costs",
        )
    if tok.text == "increase" and after_paren:
        target = [t.text for t in toks[index + 1 : index + 4]]
        if target != ["(", "total-cost", ")"]:
            shown = " ".join(target).replace("( ", "(").replace(" )", ")")
            raise PddlSyntaxError(
                f"{source}, line {tok.line}: (increase {shown} ...) changes "
                "a numeric fluent other than (total-cost), which this project does not "
                "plan with",
                hint="action costs are (increase (total-cost) N) or "
                "(increase (total-cost) (cost-function ?x ...))",
            )


def _section(toks: list[Token], keyword: str, source: str) -> tuple[int, int] | None:
    """Token indices of `(` and its `)` for the section opened by `( keyword`."""
    for index, tok in enumerate(toks[:-1]):
        if tok.text == "(" and toks[index + 1].text == keyword:
            depth = 0
            for end in range(index, len(toks)):
                depth += {"(": 1, ")": -1}.get(toks[end].text, 0)
                if depth == 0:
                    return index, end
            raise PddlSyntaxError(
                f"{source}, line {tok.line}: ({keyword} ...) is never closed",
                hint="a parenthesis is missing at the end of the section or of the file",
            )
    return None


def _rewrite_types(text: str, toks: list[Token], source: str) -> str:
    span = _section(toks, ":types", source)
    if span is None:
        return text
    first, last = span
    body = toks[first + 2 : last]
    parents: dict[str, list[tuple[str, int]]] = {}
    order: list[str] = []
    pending: list[Token] = []
    index = 0
    while index < len(body):
        tok = body[index]
        if tok.text == "-":
            if index + 1 >= len(body) or body[index + 1].text in "()":
                raise PddlSyntaxError(
                    f"{source}, line {tok.line}: a '-' in :types names no parent type",
                    hint="write `a b - parent`; (either ...) is not a parent type",
                )
            parent = body[index + 1].text
            for child in pending:
                _declare(parents, order, child.text, parent, child.line, source)
            pending = []
            index += 2
            continue
        if tok.text in "()":
            raise PddlSyntaxError(
                f"{source}, line {tok.line}: :types holds a parenthesis",
                hint="(either ...) as a parent type is not supported",
            )
        pending.append(tok)
        index += 1
    for last_tok in pending:
        _declare(parents, order, last_tok.text, ROOT_TYPE, last_tok.line, source)
    if len(order) > MAX_TYPES:
        raise LimitError(
            f"{source}: declares {len(order):,} types, over the limit of {MAX_TYPES:,}",
            hint="a domain needs a few dozen types; the type graph is bounded before "
            "parsing because checking it costs far more than reading it",
        )
    chosen = {t: _one_parent(t, parents, source) for t in order if t != ROOT_TYPE}
    _check_depth(chosen, source)
    groups: dict[str, list[str]] = {}
    for type_name, parent in chosen.items():
        groups.setdefault(parent, []).append(type_name)
    # the untyped group goes last: `a b - p c` would give `c` the parent `p`
    parts = [
        f"{' '.join(names)} - {parent}" for parent, names in groups.items() if parent != ROOT_TYPE
    ]
    parts += [" ".join(groups.get(ROOT_TYPE, []))]
    start, end = toks[first].start, toks[last].start + 1
    newlines = text.count("\n", start, end)
    rewritten = "(:types " + " ".join(parts) + "\n" * newlines + ")"
    return text[:start] + rewritten + text[end:]


def _check_depth(chosen: dict[str, str], source: str) -> None:
    """Refuse a type with more than `MAX_TYPE_DEPTH` ancestors, in time linear in the
    number of types (each depth is computed once; a cycle stops the walk and is left to
    the library, which names it)."""
    depth: dict[str, int] = {ROOT_TYPE: 0}
    for start in chosen:
        path: list[str] = []
        on_path: set[str] = set()
        current = start
        while current not in depth and current in chosen and current not in on_path:
            path.append(current)
            on_path.add(current)
            current = chosen[current]
        base = depth.get(current, 0)
        for type_name in reversed(path):
            base += 1
            depth[type_name] = base
            if base > MAX_TYPE_DEPTH:
                raise LimitError(
                    f"{source}: type {type_name!r} has {base:,} ancestors, over the limit "
                    f"of {MAX_TYPE_DEPTH} (a chain of types declared one under the other)",
                    hint="a domain's types nest a few levels deep; the type graph is "
                    "bounded before parsing because checking it costs the cube of its depth",
                )


MAX_TYPE_PARENTS = 4
"""Distinct parents one type may be listed under (IPC's storage lists two: `area -
object`, `area - surface`). Choosing among them walks the ancestors of each, so the
walks stay linear in the number of types."""


def _declare(
    parents: dict[str, list[tuple[str, int]]],
    order: list[str],
    name: str,
    parent: str,
    line: int,
    source: str,
) -> None:
    if name not in parents:
        parents[name] = []
        order.append(name)
    if any(known == parent for known, _ in parents[name]):
        return  # the same parent again adds nothing
    if len(parents[name]) >= MAX_TYPE_PARENTS:
        raise LimitError(
            f"{source}, line {line}: type {name!r} is listed under more than "
            f"{MAX_TYPE_PARENTS} parents",
            hint="declare the type under one parent",
        )
    parents[name].append((parent, line))


def _one_parent(name: str, parents: dict[str, list[tuple[str, int]]], source: str) -> str:
    """The one parent a type keeps: its most specific, when the others are its
    ancestors (`area - object`, `area - surface`: surface); else a refusal."""
    declared = [p for p, _ in parents[name] if p != ROOT_TYPE]
    if not declared:
        return ROOT_TYPE

    def ancestors(type_name: str) -> set[str]:
        seen: set[str] = set()
        todo = [type_name]
        while todo:
            current = todo.pop()
            for parent, _ in parents.get(current, []):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    for candidate in declared:
        above = ancestors(candidate)
        if all(other == candidate or other in above for other in declared):
            return candidate
    lines = ", ".join(str(line) for _, line in parents[name])
    raise PddlSyntaxError(
        f"{source}, lines {lines}: type {name!r} has the unrelated parents "
        f"{', '.join(sorted(set(declared)))}; this project holds one line of parents a type",
        hint="declare the type under one parent, or make one parent descend from the other",
    )


def _add_requirements(text: str, toks: list[Token], source: str) -> Normalized:
    words = {t.text for t in toks}
    needed = list(IMPLIED)
    if ":functions" in words or "total-cost" in words:
        needed += [":action-costs", ":numeric-fluents"]
    span = _section(toks, ":requirements", source)
    if span is None:
        domain_name = _section(toks, "domain", source)
        if domain_name is None:
            return Normalized(text)
        insert_at = toks[domain_name[1]].start + 1
        added = frozenset(needed)
        return Normalized(
            text[:insert_at] + f" (:requirements {' '.join(needed)})" + text[insert_at:],
            added,
        )
    first, last = span
    declared = {t.text for t in toks[first + 2 : last]}
    # Fast Downward refuses these two; the text uses numbers for action costs alone
    # (anything else is refused above), so the planner is handed the domain without them
    fluents = declared & {":numeric-fluents", ":fluents"}
    if ":adl" in declared:
        declared |= {":strips", ":typing", *IMPLIED}
    if ":fluents" in declared:
        declared.add(":numeric-fluents")
    if ":quantified-preconditions" in declared:
        declared |= {":existential-preconditions", ":universal-preconditions"}
    missing = [r for r in needed if r not in declared]
    if not missing:
        return Normalized(text, frozenset(fluents))
    insert_at = toks[last].start
    return Normalized(
        text[:insert_at] + " " + " ".join(missing) + text[insert_at:],
        frozenset(missing) | fluents,
    )
