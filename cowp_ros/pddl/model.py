"""A domain and a problem held together, read from files and written back as PDDL.

`PlanningTask` is an immutable value: every edit in `cowp_ros.pddl.edits` returns a new
one. The open-world loop keeps the whole history that way, and nothing can change the
task a planner is running on underneath it.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.exceptions import LarkError, VisitError
from pddl.action import Action
from pddl.core import Domain, Problem
from pddl.exceptions import PDDLError
from pddl.logic.base import Formula
from pddl.logic.predicates import Predicate
from pddl.parser import GRAMMAR_FILE, PARSERS_DIRECTORY
from pddl.parser.domain import DomainTransformer
from pddl.parser.problem import ProblemTransformer

from cowp_ros.errors import CowpError
from cowp_ros.limits import MAX_PDDL_BYTES, LimitError, check_size, read_regular_file
from cowp_ros.pddl.formulas import conjuncts_of
from cowp_ros.pddl.reader import (
    PddlSyntaxError,
    blank_comments,
    normalize_domain,
    normalize_problem,
)
from cowp_ros.pddl.syntax_errors import explain

ROOT_TYPE = "object"
MAX_NESTING = 100
"""Parentheses nest about 6 deep in real domains; the parser recurses per level, so
text nested thousands deep would end in a RecursionError instead of an answer."""


class PddlLoadError(CowpError):
    """A domain or problem that does not parse, or does not fit its domain."""


@dataclass(frozen=True, order=True)
class Atom:
    """A predicate applied to names: objects in a problem, `?variables` in an action."""

    predicate: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"({' '.join((self.predicate, *self.args))})"


@dataclass(frozen=True)
class Literal:
    """An atom or its negation, as it appears in a precondition."""

    atom: Atom
    positive: bool = True

    def __str__(self) -> str:
        return str(self.atom) if self.positive else f"(not {self.atom})"


def _parse_errors() -> tuple[type[BaseException], ...]:
    """What the `pddl` library raises for bad input (its own errors and lark's, and the
    AttributeError and IndexError its transformer raises on some malformed trees)."""
    return (
        PDDLError,
        LarkError,
        ValueError,
        AssertionError,
        TypeError,
        KeyError,
        AttributeError,
        IndexError,
        RecursionError,
    )


@dataclass(frozen=True)
class PlanningTask:
    """A PDDL domain and problem that belong together.

    `source` names where the task came from, for messages ("pddl/fill_cup/...").
    """

    domain: Domain
    problem: Problem
    source: str = field(default="<memory>", compare=False)
    hidden_requirements: frozenset[str] = field(default=frozenset(), compare=False)
    """Requirements added for the `pddl` library alone (`reader.py`): the text we
    write leaves them out, as the user's file did."""

    # ---- reading -------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        domain_path: Path | str,
        problem_path: Path | str,
        texts: tuple[str, str] | None = None,
    ) -> PlanningTask:
        """Parse a domain and a problem file; a failure names the file and the reason.
        `texts`: the two files' text, read already (`cowp plan` gives Fast Downward the
        same text it checks).

        Texts parsed before (the same paths holding the same text) are not parsed
        again: a command that loads its task to check it and then to plan pays once
        (the task is immutable). The files are read each time, so an edited file is
        never answered from the cache, however fast it was rewritten.
        """
        domain_path, problem_path = Path(domain_path), Path(problem_path)
        if texts is None:
            domain_text, problem_text = _read(domain_path), _read(problem_path)
        else:
            domain_text = check_size(texts[0], MAX_PDDL_BYTES, f"PDDL file {domain_path}")
            problem_text = check_size(texts[1], MAX_PDDL_BYTES, f"PDDL file {problem_path}")
        key = (str(domain_path), str(problem_path), domain_text, problem_text)
        if key in _loaded:
            return _loaded[key]
        domain, hidden = _parse_domain(domain_text, str(domain_path))
        problem = _parse_problem(problem_text, str(problem_path))
        task = cls._joined(domain, problem, f"{domain_path} + {problem_path}", hidden)
        if len(_loaded) >= _LOADED_KEPT:
            _loaded.pop(next(iter(_loaded)))
        _loaded[key] = task
        return task

    @classmethod
    def from_text(cls, domain_text: str, problem_text: str, source: str = "<text>") -> PlanningTask:
        """Parse PDDL held in strings (the round trip every write is checked with).

        Each text is at most `MAX_PDDL_BYTES`: parsing costs time and memory in
        proportion, and a `Plan` request's PDDL comes from any peer.
        """
        check_size(domain_text, MAX_PDDL_BYTES, f"the domain of {source}")
        check_size(problem_text, MAX_PDDL_BYTES, f"the problem of {source}")
        domain, hidden = _parse_domain(domain_text, f"{source} (domain)")
        problem = _parse_problem(problem_text, f"{source} (problem)")
        return cls._joined(domain, problem, source, hidden)

    @classmethod
    def _joined(
        cls, domain: Domain, problem: Problem, source: str, hidden: frozenset[str]
    ) -> PlanningTask:
        if problem.domain_name != domain.name:
            raise PddlLoadError(
                f"{source}: the problem is for domain {problem.domain_name!r}, not {domain.name!r}"
            )
        return cls.build(domain, problem, source, hidden)

    @classmethod
    def build(
        cls,
        domain: Domain,
        problem: Problem,
        source: str,
        hidden_requirements: frozenset[str] = frozenset(),
    ) -> PlanningTask:
        """Check the problem against the domain (types, predicates) and hold them."""
        try:
            problem.check(domain)
        except _parse_errors() as err:
            raise PddlLoadError(f"{source}: the problem does not fit its domain: {err}") from err
        return cls(
            domain=domain, problem=problem, source=source, hidden_requirements=hidden_requirements
        )

    # ---- writing -------------------------------------------------------------------

    def domain_text(self) -> str:
        """The domain as PDDL text, declaring the requirements its source declared."""
        text = str(self.domain)
        if self.hidden_requirements:
            text = _REQUIREMENTS.sub(
                lambda m: _without(m.group(0), self.hidden_requirements), text, count=1
            )
        return text + "\n"

    def problem_text(self) -> str:
        """The problem as PDDL text (with its metric and numeric facts, if any).

        Printed from a copy detached from its domain: attached, the `pddl` library writes
        the domain's `:requirements` into the problem, which pyperplan cannot read.
        """
        detached = Problem(
            self.problem.name,
            domain_name=self.domain.name,
            objects=self.problem.objects,
            init=self.problem.init,
            goal=self.problem.goal,
            metric=self.problem.metric,
        )
        return str(detached) + "\n"

    @cached_property
    def has_action_costs(self) -> bool:
        """True when the domain's actions cost (`(increase (total-cost) ...)`): a
        planner that reads costs minimises them, one that does not ignores them."""
        return any(f.name == "total-cost" for f in self.domain.functions)

    def write(
        self, directory: Path | str, stem: str = "", *, check: bool = True
    ) -> tuple[Path, Path]:
        """Write `domain.pddl` and `problem.pddl` and check that they parse back the same.

        With `check` (the default) the files are reparsed: an edit that produced PDDL our
        own parser cannot read is caught here, with the file named, instead of inside a
        planner. Planners pass `check=False` because the open-world loop has already
        validated the task after editing it (reparsing costs about 0.2 s a time).
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        domain_path = directory / f"{stem}domain.pddl"
        problem_path = directory / f"{stem}problem.pddl"
        domain_path.write_text(self.domain_text())
        problem_path.write_text(self.problem_text())
        if not check:
            return domain_path, problem_path
        reread = PlanningTask.load(domain_path, problem_path)
        if reread.init_atoms != self.init_atoms or reread.objects != self.objects:
            raise PddlLoadError(f"{directory}: the written problem does not read back the same")
        return domain_path, problem_path

    def validated(self) -> PlanningTask:
        """Round-trip through text in a temporary folder; returns the reparsed task."""
        with tempfile.TemporaryDirectory(prefix="cowp_pddl_") as tmp:
            domain_path, problem_path = self.write(tmp)
            return PlanningTask.load(domain_path, problem_path)

    # ---- vocabulary ----------------------------------------------------------------

    @cached_property
    def types(self) -> dict[str, str]:
        """Type -> parent type (`object` for top-level types).

        A type named only as a parent (`tool part - thing`, with no `thing - object`) is
        declared by that use, as PDDL has it, and is listed here as a top-level type.
        """
        declared = {
            str(t): str(p) if p else ROOT_TYPE
            for t, p in self.domain.types.items()
            if str(t) != ROOT_TYPE
        }
        for parent in list(declared.values()):
            if parent != ROOT_TYPE and parent not in declared:
                declared[parent] = ROOT_TYPE
        return declared

    @cached_property
    def fact_type(self) -> str:
        """The type a new fact about any object is declared over: the one top-level type
        every type descends from (`thing` in the dining domains), else `object`.

        Situations can be about any object, and one predicate ("is_broken") can be
        about objects of different kinds in one run; over a type that holds them all, it
        can always be reused.
        """
        tops = {self.top_type(t) for t in self.types}
        if any(t == ROOT_TYPE for t in self.objects.values()):
            tops.add(ROOT_TYPE)
        return tops.pop() if len(tops) == 1 else ROOT_TYPE

    @cached_property
    def objects(self) -> dict[str, str]:
        """Every object name -> its type: the problem's objects and the domain's constants."""
        names: dict[str, str] = {}
        for const in (*self.domain.constants, *self.problem.objects):
            names[const.name] = const.type_tag or ROOT_TYPE
        return names

    @cached_property
    def problem_object_names(self) -> frozenset[str]:
        """Names declared in the problem's `:objects` (domain constants excluded)."""
        return frozenset(o.name for o in self.problem.objects)

    @cached_property
    def constants(self) -> frozenset[str]:
        """Names declared as domain constants (usable inside action schemas)."""
        return frozenset(c.name for c in self.domain.constants)

    @cached_property
    def predicates(self) -> dict[str, tuple[str, ...]]:
        """Predicate name -> the type of each parameter."""
        return {
            p.name: tuple(_single_type(t.type_tags) for t in p.terms)
            for p in self.domain.predicates
        }

    @cached_property
    def actions(self) -> dict[str, Action]:
        """Action name -> the `pddl` action."""
        return {a.name: a for a in self.domain.actions}

    @cached_property
    def init_atoms(self) -> frozenset[Atom]:
        """The initial state as atoms (numeric facts such as `(= (total-cost) 0)` aside)."""
        return frozenset(atom_of(f) for f in self.problem.init if isinstance(f, Predicate))

    @cached_property
    def goal_atoms(self) -> frozenset[Atom]:
        """The atoms the goal's top-level conjunction asks for (positive ones; a
        quantified or disjunctive part of the goal names no single atom)."""
        return frozenset(
            atom_of(part) for part in conjuncts_of(self.problem.goal) if isinstance(part, Predicate)
        )

    def action(self, name: str) -> Action:
        """The action called `name`; a clear error when the domain has none."""
        try:
            return self.actions[name]
        except KeyError:
            known = ", ".join(sorted(self.actions))
            raise CowpError(
                f"domain {self.domain.name!r} has no action {name!r} (has: {known})"
            ) from None

    def parameter_types(self, action_name: str) -> tuple[str, ...]:
        """The declared type of each parameter of an action, in order."""
        return tuple(_single_type(v.type_tags) for v in self.action(action_name).parameters)

    def is_subtype(self, type_name: str, ancestor: str) -> bool:
        """True when `type_name` is `ancestor` or descends from it."""
        seen: set[str] = set()
        current: str | None = type_name
        while current is not None and current not in seen:
            if current == ancestor:
                return True
            seen.add(current)
            current = self.types.get(current) if current != ROOT_TYPE else None
        return ancestor == ROOT_TYPE

    def objects_of_type(self, type_name: str) -> list[str]:
        """Objects whose type is `type_name` or below it, in name order."""
        return sorted(o for o, t in self.objects.items() if self.is_subtype(t, type_name))

    def top_type(self, type_name: str) -> str:
        """The highest declared ancestor of `type_name` below `object` (e.g. `thing`)."""
        current = type_name
        seen: set[str] = set()
        while self.types.get(current, ROOT_TYPE) != ROOT_TYPE and current not in seen:
            seen.add(current)
            current = self.types[current]
        return current


def atom_of(formula: Formula) -> Atom:
    """A ground or lifted predicate as an `Atom`."""
    if not isinstance(formula, Predicate):
        raise ValueError(f"expected an atom, got {formula}")
    return Atom(formula.name, tuple(str(t) for t in formula.terms))


def _single_type(type_tags: Iterable[str]) -> str:
    """One type for a parameter; `(either a b)` is `object` here, the type that holds
    both (checks of new facts accept more than the domain says, never less; the
    planner reads the domain's own `either`)."""
    tags = sorted(str(t) for t in type_tags)
    if not tags:
        return ROOT_TYPE
    if len(tags) > 1:
        return ROOT_TYPE
    return tags[0]


_REQUIREMENTS = re.compile(r"\(:requirements[^)]*\)")


def _without(section: str, hidden: frozenset[str]) -> str:
    """A `(:requirements ...)` section without the `hidden` ones (empty: none at all)."""
    kept = [word for word in section[1:-1].split()[1:] if word not in hidden]
    return f"(:requirements {' '.join(kept)})" if kept else ""


_LOADED_KEPT = 16
_loaded: dict[tuple[str, str, str, str], PlanningTask] = {}
"""Tasks read from files, by their paths and texts (`PlanningTask.load`); at most
16 kept, the oldest forgotten first."""


def _read(path: Path) -> str:
    """A PDDL file's text: a regular file (not a pipe or device) of at most
    `MAX_PDDL_BYTES`, in UTF-8."""
    try:
        return read_regular_file(path, MAX_PDDL_BYTES, "PDDL file").decode("utf-8")
    except LimitError as err:
        raise PddlLoadError(err.message, hint=err.hint) from None
    except FileNotFoundError:
        raise PddlLoadError(f"PDDL file not found: {path}") from None
    except UnicodeDecodeError as err:
        raise PddlLoadError(
            f"PDDL file {path} is not UTF-8 text (byte {err.start})",
            hint="save it as UTF-8 (PDDL names are ASCII anyway)",
        ) from None
    except OSError as err:
        raise PddlLoadError(f"cannot read PDDL file {path}: {err.strerror}") from err


def _check_nesting(text: str, source: str) -> None:
    """Refuse text whose parentheses nest deeper than `MAX_NESTING` (comments skipped).
    The parentheses alone are walked: a large problem is mostly words."""
    parens = _NOT_A_PAREN.sub("", blank_comments(text))
    if parens and max(itertools.accumulate(1 if p == "(" else -1 for p in parens)) > MAX_NESTING:
        raise PddlLoadError(
            f"cannot parse {source}: parentheses nested more than {MAX_NESTING} deep",
            hint="real domains and problems nest a few levels; this one is not PDDL "
            "written by hand or by cowp_ros",
        )


_NOT_A_PAREN = re.compile(r"[^()]+")


@cache
def _grammar() -> Lark:
    """The `pddl` library's own grammar, compiled once, for both start symbols.

    `pddl.parser.DomainParser()` compiles its LALR tables on every construction (about
    0.25 s here), and reusing one instance would carry its transformer's state from one
    file into the next. So the tables are built once and each parse gets a fresh
    transformer from the library: the same grammar and the same result, in milliseconds.
    lark keeps the tables in a file of this user's cache (`$COWP_CACHE_DIR`), one per
    installation, checked against a hash of the grammar when read, so that a command
    started to plan once (`cowp plan`) does not pay 0.13 s a start symbol for them; an
    unwritable cache folder only costs that time. (Not lark's default, the shared
    temporary folder: the file is a pickle, and another user could put one there.)
    """
    folder = Path(os.environ.get("COWP_CACHE_DIR", Path.home() / ".cache" / "cowp_ros"))
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    # One file per installation: lark's check hashes the grammar's folder and its own
    # version, so two venvs of one user sharing a file rebuilt and rewrote it in turn,
    # and every start of either paid the build.
    installation = f"{PARSERS_DIRECTORY}|{lark.__version__}|{sys.version_info[:2]}"
    tag = hashlib.sha256(installation.encode()).hexdigest()[:12]
    return Lark(
        GRAMMAR_FILE.read_text(),
        parser="lalr",
        import_paths=[PARSERS_DIRECTORY],
        start=["domain", "problem"],
        cache=str(folder / f"pddl_grammar_{tag}.lark"),
    )


class _DomainReader(DomainTransformer):
    """The library's transformer, with `object` among the types a term may name.

    The library drops `object` from the types it knows, then refuses `?x - object`
    in any domain that declares types: PDDL's root type, named in most IPC domains.
    """

    def types(self, args: Any) -> Any:
        result = super().types(args)
        self._types[ROOT_TYPE] = None
        return result


def _parse_with(
    start: str, transformer: type[DomainTransformer | ProblemTransformer], text: str
) -> Any:
    tree = _grammar().parse(text, start=start)
    try:
        return transformer().transform(tree)
    except VisitError as err:  # the library's own error, raised inside a rule
        raise err.orig_exc from err


def _parse_domain(text: str, source: str) -> tuple[Domain, frozenset[str]]:
    _check_nesting(text, f"domain {source}")
    try:
        normalized = normalize_domain(text, f"domain {source}")
    except PddlSyntaxError as err:
        raise PddlLoadError(err.message, hint=err.hint) from None
    try:
        domain = _parse_with("domain", _DomainReader, normalized.text)
    except _parse_errors() as err:
        raise _load_error(err, text, f"domain {source}") from err
    return domain, normalized.hidden_requirements


def _parse_problem(text: str, source: str) -> Problem:
    _check_nesting(text, f"problem {source}")
    try:
        normalized = normalize_problem(text, f"problem {source}")
    except PddlSyntaxError as err:
        raise PddlLoadError(err.message, hint=err.hint) from None
    try:
        return _parse_with("problem", ProblemTransformer, normalized)
    except _parse_errors() as err:
        raise _load_error(err, text, f"problem {source}") from err


def _load_error(err: BaseException, text: str, where: str) -> PddlLoadError:
    """The parser's refusal in words (the file, the line, what is wrong: `syntax_errors`),
    else its first lines."""
    said = explain(err, text, where)
    if said is not None:
        return PddlLoadError(said, hint="fix that line of the file, then run the command again")
    return PddlLoadError(f"cannot parse {where}: {_first_line(err)}")


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    return " ".join(lines[:3]) if lines else type(err).__name__
