"""Per-method LLM usage over one shared model (one server, one answer cache).

Every method talks to the same client so that they share the answer cache and the
server; `MeteredModel` forwards each question and adds the client's usage delta to its
own counter, so a method's calls, tokens and cache hits are its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from cowp_ros.llm.language_model import Choice, Example, LanguageModel, Usage, YesNo

T = TypeVar("T")


def usage_delta(after: Usage, before: Usage) -> Usage:
    return Usage(
        calls=after.calls - before.calls,
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        cache_hits=after.cache_hits - before.cache_hits,
        seconds=after.seconds - before.seconds,
    )


class MeteredModel:
    """A `LanguageModel` that forwards to `inner` and keeps its own `usage`."""

    def __init__(self, inner: LanguageModel) -> None:
        self.inner = inner
        self.usage = Usage()

    @property
    def name(self) -> str:
        return self.inner.name

    def _metered(self, ask: Callable[[], T]) -> T:
        before = replace(self.inner.usage)
        try:
            return ask()
        finally:
            self.usage.add(usage_delta(self.inner.usage, before))

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        return self._metered(
            lambda: self.inner.ask_yes_no(question, system=system, examples=examples)
        )

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        return self._metered(
            lambda: self.inner.ask_choice(question, options, system=system, examples=examples)
        )

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        return self._metered(
            lambda: self.inner.complete(
                prompt, system=system, examples=examples, max_tokens=max_tokens
            )
        )
