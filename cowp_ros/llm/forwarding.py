"""A language model in front of another: one place that forwards the three questions.

Several wrappers stand between a reasoner and the model client: a request's question
budget (`question_budget.QuestionBudget`), a turn at the one model server
(`turns.Decisive`, `turns.Background`), a benchmark method's own usage counter
(`bench.metering.MeteredModel`). Each changes only what happens around a question, so
each is this class with `_question` overridden; the questions' signatures, the model's
name and usage, and its extras (`base_url`, `warm`, `rank`...) are forwarded here once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cowp_ros.llm.language_model import Choice, Example, LanguageModel, Usage, YesNo

T = TypeVar("T")


class ForwardingModel:
    """`model`, each question passed through `_question` (which asks it as it is)."""

    def __init__(self, model: LanguageModel) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def usage(self) -> Usage:
        return self.model.usage

    def _question(self, ask: Callable[[], T]) -> T:
        """Around one question: a subclass counts, meters or waits its turn here."""
        return ask()

    def __getattr__(self, attribute: str) -> Any:
        """The model's extras (`base_url`, `warm`, `rank`, ...), as they are."""
        if attribute.startswith("_") or attribute == "model":
            raise AttributeError(attribute)
        return getattr(self.model, attribute)

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        return self._question(
            lambda: self.model.ask_yes_no(question, system=system, examples=examples)
        )

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        return self._question(
            lambda: self.model.ask_choice(question, options, system=system, examples=examples)
        )

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        return self._question(
            lambda: self.model.complete(
                prompt, system=system, examples=examples, max_tokens=max_tokens
            )
        )
