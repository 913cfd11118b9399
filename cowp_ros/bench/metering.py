"""Per-method LLM usage over one shared model (one server, one answer cache).

Every method talks to the same client so that they share the answer cache and the
server; `MeteredModel` forwards each question and adds the client's usage delta to its
own counter, so a method's calls, tokens and cache hits are its own. Any other public
method of the client (`rank`, `ask_batch`, an embedding call) is forwarded and metered
the same way. With `cowp bench --jobs N` each worker has its own client (one server,
one answer cache), so the delta is never another trial's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

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

    def __getattr__(self, name: str) -> Any:
        """Forward the client's other public methods (`rank`, `embed`...), metered."""
        if name.startswith("_") or name == "inner":
            raise AttributeError(name)
        attribute = getattr(self.inner, name)
        if not callable(attribute):
            return attribute

        def metered(*args: Any, **kwargs: Any) -> Any:
            return self._metered(lambda: attribute(*args, **kwargs))

        return metered
