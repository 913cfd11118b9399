"""Where the language model lives, resolved once from CLI flags, config and env vars.

Precedence: explicit values (CLI flags, node parameters) > `OPENAI_BASE_URL`,
`OPENAI_MODEL`, `OPENAI_API_KEY` > nothing. When no base URL results, the user has not
configured a server, and the stack starts the embedded local model on demand
(`cowp_ros.llm.endpoint`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_CACHE_DIR = Path(os.environ.get("COWP_CACHE_DIR", Path.home() / ".cache" / "cowp_ros"))


@dataclass(frozen=True)
class LLMSettings:
    """How to reach an OpenAI-compatible server.

    `base_url` None means "not configured": use the embedded local model.
    `api_key` may be any non-empty string for a local server (the openai client refuses
    to start without one).
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0
    cache_path: Path | None = DEFAULT_CACHE_DIR / "answers.sqlite3"

    @property
    def configured(self) -> bool:
        """True when the user named a server (flag, config or env)."""
        return bool(self.base_url)

    def with_endpoint(self, base_url: str, model: str, api_key: str = "local") -> LLMSettings:
        """A copy pointing at a concrete server (e.g. the embedded one once started)."""
        return replace(self, base_url=base_url, model=model, api_key=self.api_key or api_key)

    @classmethod
    def resolve(
        cls,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float | None = None,
        cache_path: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> LLMSettings:
        """Merge explicit values over the usual `OPENAI_*` environment variables."""
        env = dict(os.environ) if env is None else env
        return cls(
            base_url=base_url or env.get("OPENAI_BASE_URL") or None,
            model=model or env.get("OPENAI_MODEL") or None,
            api_key=api_key or env.get("OPENAI_API_KEY") or None,
            timeout_s=timeout_s if timeout_s is not None else cls.timeout_s,
            cache_path=cache_path if cache_path is not None else cls.cache_path,
        )
