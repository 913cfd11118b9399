"""Turns at one model server: a decision the robot waits on goes before work asked ahead.

One model server answers one question at a time, and on a small CPU a question takes
seconds. Two kinds of request share it. A *decision* (a situation's check, a stand-in's
assessment) is what the robot stands still for. Work *asked ahead* (what a new plan's
objects will need, reading the questions' prefix) only makes later decisions cheaper.
When a situation arrives while the questions asked ahead are still being answered, it
must not wait behind all of them: that wait was tens of seconds on a 2-core machine, the
robot standing still all that time.

So the model is taken in turns, as a latency-aware server does:

- a decision is under way for its whole request: no question asked ahead starts
  meanwhile, and its own questions wait only for the question in flight (a decision
  that needs no question waits for nothing);
- work asked ahead takes the model one question at a time, and starts no question while
  a decision holds the model or waits for it; it resumes once no decision waits;
- work asked ahead is dropped at its next question when it became moot: its run was
  cancelled, or newer work asked ahead replaced it (`Background.still_wanted`).

A question in flight is never interrupted (the server cannot be), so a decision waits at
most one question asked ahead. `ordered=False` is the order before this module: every
request in arrival order, work asked ahead held for all its questions, kept so that a
benchmark can measure both in the same run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from typing import Any, TypeVar

from cowp_ros.llm.forwarding import ForwardingModel
from cowp_ros.llm.language_model import LanguageModel, Usage

T = TypeVar("T")


class DroppedError(Exception):
    """Work asked ahead was dropped before its next question (cancelled or replaced)."""


class ModelTurns:
    """Who asks the model next: decisions first, work asked ahead between them.

    `claim()` marks a decision under way for a block: no question asked ahead starts
    meanwhile, but the model is taken only for the decision's questions (`decision()`),
    so a decision that needs no question (grounding alone) waits for nothing, and its
    own work between questions runs beside the question in flight. `decision()` claims
    and holds the model for a block (re-entrant in its thread); `background()` holds it
    for one question asked ahead.
    """

    def __init__(self, ordered: bool = True) -> None:
        self.ordered = ordered
        self._ready = threading.Condition()
        self._holder: int | None = None  # the thread that holds the model
        self._depth = 0
        self._deciding = 0  # decisions under way (threads that claimed), holding or not
        self._claims = threading.local()  # this thread's claims, nested
        self._generation = 0  # bumped when newer work asked ahead replaces older

    @contextlib.contextmanager
    def claim(self) -> Iterator[None]:
        """A decision is under way for the block: no question asked ahead starts. Counted
        once per thread however deep (its questions claim again inside)."""
        depth = getattr(self._claims, "depth", 0)
        self._claims.depth = depth + 1
        if depth == 0:
            with self._ready:
                self._deciding += 1
        try:
            yield
        finally:
            self._claims.depth = depth
            if depth == 0:
                with self._ready:
                    self._deciding -= 1
                    self._ready.notify_all()

    @contextlib.contextmanager
    def decision(self) -> Iterator[None]:
        """Hold the model for a decision: after the question in flight, before any work
        asked ahead that waits."""
        me = threading.get_ident()
        with self.claim():
            with self._ready:
                if self._holder == me:
                    self._depth += 1
                else:
                    self._ready.wait_for(lambda: self._holder is None)
                    self._holder, self._depth = me, 1
            try:
                yield
            finally:
                self._release()

    @contextlib.contextmanager
    def background(self, still_wanted: Callable[[], bool] = lambda: True) -> Iterator[None]:
        """Hold the model for one question asked ahead, once no decision holds it or is
        under way; `DroppedError` instead when `still_wanted()` turns false meanwhile.
        In the thread that holds the model already, it is that holder's own turn."""
        me = threading.get_ident()
        with self._ready:
            if self._holder == me:
                self._depth += 1
            else:

                def free() -> bool:
                    if not still_wanted():
                        return True
                    deciding = self._deciding if self.ordered else 0
                    return self._holder is None and not deciding

                while not free():
                    self._ready.wait(0.5)  # `still_wanted` may turn false from outside
                if not still_wanted():
                    raise DroppedError("the work asked ahead was no longer wanted")
                self._holder, self._depth = me, 1
        try:
            yield
        finally:
            self._release()

    @property
    def waiting_decisions(self) -> int:
        """Decisions under way now (waiting for the model, or between its questions)."""
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


class _Turned(ForwardingModel):
    """`model`, each question in a turn of `turns` (of the kind `_held` takes); `spent`
    is what the model spent on these questions, counted inside each turn, so another
    request's question answered between two of them is not counted here."""

    def __init__(self, model: LanguageModel, turns: ModelTurns) -> None:
        super().__init__(model)
        self.turns = turns
        self.spent = Usage()

    def _held(self) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        with self._held():
            before = replace(self.model.usage)
            try:
                yield
            finally:
                self.spent.add(_minus(self.model.usage, before))

    def _question(self, ask: Callable[[], T]) -> T:
        with self._turn():
            return ask()

    @contextlib.contextmanager
    def one_turn(self) -> Iterator[None]:
        """Hold one turn over a few calls: a question and the keeping of its answer, so
        that a request that comes next finds the answer kept (the questions inside
        still count their own usage)."""
        with self._held():
            yield

    def __getattr__(self, attribute: str) -> Any:
        """Extras of the model (its URL); its `warm` (reading a prefix) takes a turn too."""
        found = super().__getattr__(attribute)
        if attribute != "warm" or not callable(found):
            return found

        def warm(*args: Any, **kwargs: Any) -> Any:
            with self._turn():
                return found(*args, **kwargs)

        return warm


class Decisive(_Turned):
    """`model` for a decision: each question in a decision turn of `turns`. The caller
    claims the turns for the whole decision (`ModelTurns.claim`), so that no question
    asked ahead starts between two of its questions."""

    def _held(self) -> contextlib.AbstractContextManager[None]:
        return self.turns.decision()


class Background(_Turned):
    """`model` for work asked ahead: each question in a background turn of `turns`, and
    none once `still_wanted()` is false (`DroppedError` instead): newer work replaced
    it (`ModelTurns.replace_background`), or its run was cancelled (a caller passes its
    cancel token's check)."""

    def __init__(
        self,
        model: LanguageModel,
        turns: ModelTurns,
        *,
        still_wanted: Callable[[], bool] = lambda: True,
    ) -> None:
        super().__init__(model, turns)
        self.still_wanted = still_wanted

    def _held(self) -> contextlib.AbstractContextManager[None]:
        return self.turns.background(self.still_wanted)


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        **{f.name: getattr(after, f.name) - getattr(before, f.name) for f in fields(Usage)}
    )
