"""Turns at one model server: a decision the robot waits on goes before work asked ahead.

One model server answers one question at a time, and on a small CPU a question takes
seconds. Two kinds of request share it. A *decision* (a situation's check, a stand-in's
assessment) is what the robot stands still for. Work *asked ahead* (what a new plan's
objects will need, reading the questions' prefix) only makes later decisions cheaper.
When a situation arrives while the questions asked ahead are still being answered, it
must not wait behind all of them: that wait was tens of seconds on a 2-core machine, the
robot standing still all that time.

So the model is taken in turns, as a latency-aware server does:

- a decision takes the model for its whole request (its questions follow each other and
  its usage counts stay its own); it waits only for the question in flight;
- work asked ahead takes the model one question at a time, and starts no question while
  a decision holds the model or waits for it; it resumes once no decision waits;
- work asked ahead is dropped at its next question when it became moot: its run was
  cancelled, or newer work asked ahead replaced it (`Background.superseded`).

A question in flight is never interrupted (the server cannot be), so a decision waits at
most one question asked ahead. `ordered=False` is the order before this module: every
request in arrival order, work asked ahead held for all its questions, kept so that a
benchmark can measure both in the same run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from typing import Any

from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.llm.language_model import Choice, Example, LanguageModel, Usage, YesNo


class DroppedError(Exception):
    """Work asked ahead was dropped before its next question (cancelled or replaced)."""


class ModelTurns:
    """Who asks the model next: decisions first, work asked ahead between them.

    `decision()` holds the model for a block (re-entrant in its thread); `background()`
    holds it for one question. `log`, when given, is told each turn as it is taken
    ("decision" or "background"), for tests that check the order.
    """

    def __init__(self, ordered: bool = True, log: Callable[[str], None] | None = None) -> None:
        self.ordered = ordered
        self._log = log
        self._ready = threading.Condition()
        self._holder: int | None = None  # the thread that holds the model
        self._depth = 0
        self._deciding = 0  # decisions waiting for the model
        self._generation = 0  # bumped when newer work asked ahead replaces older

    @contextlib.contextmanager
    def decision(self) -> Iterator[None]:
        """Hold the model for a decision: after the question in flight, before any work
        asked ahead that waits."""
        me = threading.get_ident()
        with self._ready:
            if self._holder == me:
                self._depth += 1
            else:
                self._deciding += 1
                try:
                    self._ready.wait_for(lambda: self._holder is None)
                finally:
                    self._deciding -= 1
                self._holder, self._depth = me, 1
                self._tell("decision")
        try:
            yield
        finally:
            self._release()

    @contextlib.contextmanager
    def background(self, still_wanted: Callable[[], bool] = lambda: True) -> Iterator[None]:
        """Hold the model for one question asked ahead, once no decision holds it or waits
        for it; `DroppedError` instead when `still_wanted()` turns false meanwhile. In
        the thread of a decision (or unordered), it is that decision's own turn."""
        me = threading.get_ident()
        with self._ready:
            if self._holder == me:
                self._depth += 1
            else:

                def free() -> bool:
                    if not still_wanted():
                        return True
                    waiting = self._deciding if self.ordered else 0
                    return self._holder is None and not waiting

                while not free():
                    self._ready.wait(0.5)  # `still_wanted` may turn false from outside
                if not still_wanted():
                    raise DroppedError("the work asked ahead was no longer wanted")
                self._holder, self._depth = me, 1
                self._tell("background")
        try:
            yield
        finally:
            self._release()

    @property
    def waiting_decisions(self) -> int:
        """Decisions waiting for the model now."""
        with self._ready:
            return self._deciding

    def replace_background(self) -> Callable[[], bool]:
        """Newer work asked ahead replaces what is pending: the returned check stays true
        until the next call, so the older work drops at its next question."""
        with self._ready:
            self._generation += 1
            mine = self._generation
            self._ready.notify_all()
        return lambda: self._generation == mine

    def _release(self) -> None:
        with self._ready:
            self._depth -= 1
            if self._depth == 0:
                self._holder = None
                self._ready.notify_all()

    def _tell(self, kind: str) -> None:
        if self._log is not None:
            self._log(kind)


class Background:
    """`model` for work asked ahead: each question in a background turn of `turns`, and
    none once `cancel` is set or `still_wanted()` is false (`DroppedError` instead).

    `spent` is what the model spent on this work's own questions, counted inside each
    turn, so a decision answered between two of them is not counted here."""

    def __init__(
        self,
        model: LanguageModel,
        turns: ModelTurns,
        *,
        cancel: CancelToken = NEVER,
        still_wanted: Callable[[], bool] = lambda: True,
    ) -> None:
        self.model = model
        self.turns = turns
        self.cancel = cancel
        self.still_wanted = still_wanted
        self.spent = Usage()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def usage(self) -> Usage:
        return self.model.usage

    def _wanted(self) -> bool:
        return not self.cancel.is_set() and self.still_wanted()

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """A background turn; a cancel (before or while waiting) raises
        `RunCancelledError`, as a cancelled run's other waits do."""
        self.cancel.check()
        try:
            with self.turns.background(self._wanted):
                yield
        except DroppedError:
            self.cancel.check()
            raise

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        with self._held():
            before = replace(self.model.usage)
            try:
                yield
            finally:
                self.spent.add(_minus(self.model.usage, before))

    @contextlib.contextmanager
    def one_turn(self) -> Iterator[None]:
        """Hold one background turn over a few calls: a question and the keeping of its
        answer, so that a decision that comes next finds the answer kept (the questions
        inside still count their own usage)."""
        with self._held():
            yield

    def __getattr__(self, attribute: str) -> Any:
        """Extras of the model (its URL); its `warm` (reading a prefix) takes a turn too."""
        found = getattr(self.model, attribute)
        if attribute != "warm" or not callable(found):
            return found

        def warm(*args: Any, **kwargs: Any) -> Any:
            with self._turn():
                return found(*args, **kwargs)

        return warm

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        with self._turn():
            return self.model.ask_yes_no(question, system=system, examples=examples)

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        with self._turn():
            return self.model.ask_choice(question, options, system=system, examples=examples)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        with self._turn():
            return self.model.complete(
                prompt, system=system, examples=examples, max_tokens=max_tokens
            )


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        **{f.name: getattr(after, f.name) - getattr(before, f.name) for f in fields(Usage)}
    )
