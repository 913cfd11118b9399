"""A language model that answers at most so many questions, then refuses.

A commonsense request costs questions in proportion to what it carries (about five per
candidate kind, one or two per plan step). The request's counts are bounded where it
comes in; this is the backstop that bounds the questions themselves, whatever path the
reasoners take: one request can never keep the model busy for hundreds of questions.
It also stops at once, before the next question, when the request's caller has
cancelled it (`stop`): no more of a cancelled request's questions reach the model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.limits import LimitError
from cowp_ros.llm.language_model import Choice, Example, LanguageModel, Usage, YesNo


class RequestCancelledError(CowpError):
    """The caller cancelled the request whose questions these are."""


class QuestionBudget:
    """`model`, except that question number `limit + 1` raises LimitError, and any
    question once `stop` is set raises RequestCancelledError."""

    def __init__(
        self, model: LanguageModel, limit: int, stop: threading.Event | None = None
    ) -> None:
        self.model = model
        self.limit = limit
        self.stop = stop
        self.asked = 0

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def usage(self) -> Usage:
        return self.model.usage

    def __getattr__(self, attribute: str) -> Any:  # base_url and other extras
        return getattr(self.model, attribute)

    def _spend(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise RequestCancelledError(
                f"the request was cancelled by its caller after {self.asked} questions: "
                "no more are asked"
            )
        self.asked += 1
        if self.asked > self.limit:
            raise LimitError(
                f"the request needs more than {self.limit} questions to the model, over "
                "the limit for one request",
                hint="send fewer candidates or steps per request",
            )

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        self._spend()
        return self.model.ask_yes_no(question, system=system, examples=examples)

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        self._spend()
        return self.model.ask_choice(question, options, system=system, examples=examples)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        self._spend()
        return self.model.complete(prompt, system=system, examples=examples, max_tokens=max_tokens)
