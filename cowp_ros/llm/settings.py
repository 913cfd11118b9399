"""Where the language model lives, resolved once from CLI flags, config and env vars.

Precedence: explicit values (CLI flags, node parameters) > `OPENAI_BASE_URL`,
`OPENAI_MODEL`, `OPENAI_API_KEY` > nothing. When no base URL results, the user has not
configured a server, and the stack starts the embedded local model on demand
(`cowp_ros.llm.endpoint`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from cowp_ros.errors import CowpError

DEFAULT_CACHE_DIR = Path(os.environ.get("COWP_CACHE_DIR", Path.home() / ".cache" / "cowp_ros"))
HIDDEN = "***"
_SECRET_QUERY = re.compile(r"(key|token|secret|password|pass|auth|sig|signature)", re.IGNORECASE)


def redact_url(url: str | None) -> str:
    """A URL fit to print or log: a password or user in it, and secret-looking query
    parameters, become `***` (`http://robot:sk-123@host/v1` -> `http://robot:***@host/v1`).

    Users paste keys into URLs; a message that names the server must never repeat them.
    Text that does not parse as a URL is returned with anything before an `@` hidden.
    """
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        parts = None
    if parts is None or (not parts.netloc and "@" in url):
        return re.sub(r"[^/@]*@", f"{HIDDEN}@", url)
    if ":" in host:
        host = f"[{host}]"
    netloc = parts.netloc
    if "@" in netloc:
        user = parts.username or ""
        shown_user = f"{user}:{HIDDEN}" if parts.password is not None else HIDDEN
        netloc = f"{shown_user}@{host}{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = "&".join(
            f"{name}={HIDDEN if _SECRET_QUERY.search(name) else value}" for name, value in pairs
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> list[str]:
    """The secrets a URL carries (its password, and a user that may be a key)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password or "", parts.username or ""]
        found += [v for n, v in parse_qsl(parts.query) if _SECRET_QUERY.search(n)]
    except ValueError:
        return []
    return [secret for secret in found if len(secret) >= 4]


def scrub(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """`text` with every secret replaced by `***` (for server messages we pass on)."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return text


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
    """Seconds one call may take in all: every try, and every wait a server asks for."""
    cache_path: Path | None = DEFAULT_CACHE_DIR / "answers.sqlite3"
    cache_scope: str | None = None
    """Whose answers the cache holds: None means this server's URL and model. The
    embedded server sets it to its verified model file, because its port changes on
    every start while its answers do not."""

    @property
    def configured(self) -> bool:
        """True when the user named a server (flag, config or env)."""
        return bool(self.base_url)

    @property
    def shown_url(self) -> str:
        """The base URL as messages and logs show it (secrets hidden)."""
        return redact_url(self.base_url)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Strings that must never be printed: the API key and what the URL carries."""
        found = url_secrets(self.base_url)
        if self.api_key and self.api_key != "local":
            found.append(self.api_key)
        return tuple(found)

    @property
    def answer_scope(self) -> str:
        """The answer cache's key for this server: `cache_scope`, else URL and model."""
        if self.cache_scope:
            return self.cache_scope
        return f"{redact_url(str(self.base_url or '')).rstrip('/')}|{self.model or ''}"

    def with_endpoint(
        self,
        base_url: str,
        model: str,
        api_key: str = "local",
        *,
        cache_scope: str | None = None,
    ) -> LLMSettings:
        """A copy pointing at a concrete server (e.g. the embedded one once started)."""
        return replace(
            self,
            base_url=base_url,
            model=model,
            api_key=self.api_key or api_key,
            cache_scope=cache_scope if cache_scope is not None else self.cache_scope,
        )

    def without_cache(self) -> LLMSettings:
        """A copy that neither reads nor writes the answer cache."""
        return replace(self, cache_path=None)

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


@dataclass(frozen=True)
class Sampling:
    """Sampled answers instead of greedy ones: `temperature` > 0 and the server's `seed`.

    Used by `cowp bench --temperature`, so that repeated trials are samples of the
    model's answers rather than one answer read again; the seed makes each sample
    reproducible on a server that honours it (llama.cpp and OpenAI do). The answer cache
    keys a sampled answer with its temperature and seed, never serving it for a greedy
    question or another seed's. A yes/no verdict is then the token the server drew;
    the log-probabilities a method scores with (P(yes), SayCan's skill scores) are the
    model's distribution and do not change with sampling, so such a method's figures do
    not vary between samples.
    """

    temperature: float
    seed: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.temperature) and 0.0 < self.temperature <= 2.0):
            raise CowpError(
                f"a sampling temperature must be in (0, 2], not {self.temperature}",
                hint="greedy answers need no sampling: leave the temperature out",
            )

    def to_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "seed": self.seed}
