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
from collections.abc import Callable
from typing import TypeVar

from cowp_ros.errors import CowpError
from cowp_ros.limits import LimitError
from cowp_ros.llm.forwarding import ForwardingModel
from cowp_ros.llm.language_model import LanguageModel

T = TypeVar("T")


class RequestCancelledError(CowpError):
    """The caller cancelled the request whose questions these are."""


class QuestionBudget(ForwardingModel):
    """`model`, except that question number `limit + 1` raises LimitError, and any
    question once `stop` is set raises RequestCancelledError."""

    def __init__(
        self, model: LanguageModel, limit: int, stop: threading.Event | None = None
    ) -> None:
        super().__init__(model)
        self.limit = limit
        self.stop = stop
        self.asked = 0

    def _question(self, ask: Callable[[], T]) -> T:
        self._spend()
        return ask()

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
