"""The answer cache as one model client sees it.

The client (`client.OpenAICompatibleModel`) sits on three layers: the transport
(`transport.ModelTransport`: deadlines, retries, size caps, key redaction), the question
parsing, and this one: which cache scope its answers belong to, sampled answers kept
apart from greedy ones, and a cache that fails costing speed, never correctness.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cowp_ros.llm.answer_cache import AnswerCache
from cowp_ros.llm.completion import max_answer_chars
from cowp_ros.llm.settings import LLMSettings

if TYPE_CHECKING:
    from cowp_ros.llm.settings import Sampling


def open_cache(settings: LLMSettings, given: AnswerCache | None = None) -> AnswerCache | None:
    """`given`, else the settings' cache file; None when there is none or it cannot be
    opened (the client then asks the model every time)."""
    if given is not None:
        return given
    if settings.cache_path is None:
        return None
    try:
        return AnswerCache(settings.cache_path)
    except Exception:  # an unusable cache costs speed, never correctness
        return None


class CachedAnswers:
    """Get and put one client's answers; `on_hit` counts a hit in the client's usage."""

    def __init__(
        self,
        cache: AnswerCache | None,
        *,
        scope: Callable[[], str],
        model_name: Callable[[], str],
        on_hit: Callable[[], None],
    ) -> None:
        self.cache = cache
        self.sampling: Sampling | None = None
        """Sampled answers are keyed with their temperature and seed (see `Sampling`)."""
        self._scope = scope
        self._model_name = model_name
        self._on_hit = on_hit

    def keyed(self, key: Mapping[str, Any]) -> Mapping[str, Any]:
        """A cache key with the sampling settings in it when answers are sampled (a
        greedy key is unchanged, so the answers cached before stay valid)."""
        if self.sampling is None:
            return key
        return {**key, "sampling": self.sampling.to_dict()}

    def get(self, kind: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        """The cached answer, or None (none there, or the cache failed)."""
        if self.cache is None:
            return None
        try:
            hit = self.cache.get(self._scope(), kind, self.keyed(key))
        except Exception:
            return None
        if hit is not None:
            self._on_hit()
        return hit

    def get_text(self, kind: str, key: Mapping[str, Any], max_tokens: int) -> str | None:
        """A cached free-text answer, if it is text no longer than the request allows."""
        hit = self.get(kind, key)
        text = hit.get("text") if hit is not None else None
        if isinstance(text, str) and len(text) <= max_answer_chars(max_tokens):
            return text
        return None

    def put(self, kind: str, key: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
        """Keep `answer`; a full disk must not stop the robot."""
        if self.cache is None:
            return
        with contextlib.suppress(Exception):
            self.cache.put(self._scope(), kind, self.keyed(key), answer, model=self._model_name())
