"""Per-method LLM usage over one shared model (one server, one answer cache).

Every method talks to the same client so that they share the answer cache and the
server; `MeteredModel` forwards each question and adds the client's usage delta to its
own counter, so a method's calls, tokens and cache hits are its own. Any other public
method of the client (`rank`, `ask_batch`, an embedding call) is forwarded and metered
the same way. With `cowp bench --jobs N` each worker has its own client (one server,
one answer cache), so the delta is never another trial's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from cowp_ros.llm.forwarding import ForwardingModel
from cowp_ros.llm.language_model import LanguageModel, Usage

T = TypeVar("T")


def usage_delta(after: Usage, before: Usage) -> Usage:
    return Usage(
        calls=after.calls - before.calls,
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        cache_hits=after.cache_hits - before.cache_hits,
        seconds=after.seconds - before.seconds,
    )


class MeteredModel(ForwardingModel):
    """A `LanguageModel` that forwards to `inner` and keeps its own `usage`."""

    def __init__(self, inner: LanguageModel) -> None:
        super().__init__(inner)
        self._usage = Usage()

    @property
    def inner(self) -> LanguageModel:
        return self.model

    @property
    def usage(self) -> Usage:
        return self._usage

    def _question(self, ask: Callable[[], T]) -> T:
        before = replace(self.model.usage)
        try:
            return ask()
        finally:
            self._usage.add(usage_delta(self.model.usage, before))

    def __getattr__(self, name: str) -> Any:
        """Forward the client's other public methods (`rank`, `embed`...), metered."""
        attribute = super().__getattr__(name)
        if not callable(attribute):
            return attribute

        def metered(*args: Any, **kwargs: Any) -> Any:
            return self._question(lambda: attribute(*args, **kwargs))

        return metered
