"""One HTTP transport for every model server the stack talks to (text, vision, embeddings).

A robot that waits on a model must know the wait ends, whatever the server does, and
that a key it was given never shows up in a message. So every model client sends its
JSON through `ModelTransport`, which gives each call:

* a **deadline**: `timeout_s` bounds the whole call, every try and every wait a server
  asks for with `Retry-After` included; a server that asks for more time than is left
  is not waited for, and one that drips a byte a second is cut off at the deadline;
* **retries** of what is worth another try (connection refused, 408/409/429/5xx), with
  back-off, inside that deadline;
* **size caps**: at most `completion.MAX_REPLY_BYTES` of a reply, `MAX_ERROR_BYTES` of
  an error body;
* **key redaction**: every message names the server by its URL with any key hidden, and
  server text passed on has the keys scrubbed.

Every failure a user can fix becomes a `CowpError` that names the server and what to do;
what to do depends on which server it is (`ServerRole`: the language model's flags are
not the vision model's). The clients on top (`llm.client`, `methods.dkprompt.vision`,
`llm.embeddings`) parse replies and count usage; none of them talks HTTP itself.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from cowp_ros.errors import CowpError
from cowp_ros.llm.completion import MAX_REPLY_BYTES, error_message
from cowp_ros.llm.settings import LLMSettings, scrub

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Answers worth another try (as the `openai` client retries them)."""
FIRST_BACKOFF_S = 0.5
MAX_ERROR_BYTES = 64 * 1024
"""An error body is read up to this much: its message is all a person needs."""


@dataclass(frozen=True)
class ServerRole:
    """What a server is for, as messages name it, and the hints a user can act on."""

    name: str
    """How messages call it: "LLM server", "vision server"."""
    reply_kind: str
    """What a usable answer is: "chat completion", "embeddings reply"."""
    unreachable_hint: str
    timeout_hint: str
    key_hint: str
    model_hint: str
    status_hint: str
    url_example: str = "http://127.0.0.1:8080/v1"


LANGUAGE_MODEL = ServerRole(
    name="LLM server",
    reply_kind="chat completion",
    unreachable_hint="start it (e.g. 'cowp llm serve') or fix OPENAI_BASE_URL / --llm-url; "
    "unset them to use the embedded local model",
    timeout_hint="the machine may be busy: raise the timeout (--llm-timeout), or use a "
    "smaller model",
    key_hint="set OPENAI_API_KEY (or --llm-key) to a key it accepts",
    model_hint="set OPENAI_MODEL (or --llm-model) to one it serves",
    status_hint="check the server's log; retry when it is healthy",
)
VISION_MODEL = ServerRole(
    name="vision server",
    reply_kind="chat completion",
    unreachable_hint="check --vlm-url and that the server is running",
    timeout_hint="the server may be busy or the image large: retry, or use a smaller model",
    key_hint="set --vlm-api-key (or OPENAI_API_KEY) to a key it accepts",
    model_hint="set --vlm-model to one it serves",
    status_hint="does its model accept images? check the server's log",
)
EMBEDDING_MODEL = ServerRole(
    name="embeddings server",
    reply_kind="embeddings reply",
    unreachable_hint="check the server's URL and that it is running with embeddings enabled, "
    "or use the bundled SentenceEmbedder",
    timeout_hint="the machine may be busy: raise the timeout, or use a smaller model",
    key_hint="give a key it accepts",
    model_hint="name an embedding model it serves",
    status_hint="start it with embeddings enabled, or use the bundled SentenceEmbedder",
)


@dataclass(frozen=True)
class Exchange:
    """One HTTP exchange as read: the status, headers and (bounded) body."""

    status: int
    headers: httpx.Headers
    body: bytes
    too_large: bool = False


class _DeadlineError(Exception):
    """The call's time is up (raised inside the transport, mapped in `request`)."""


class ModelTransport:
    """JSON requests to one OpenAI-compatible server, bounded in time and size."""

    def __init__(
        self, settings: LLMSettings, role: ServerRole = LANGUAGE_MODEL, *, max_retries: int = 1
    ) -> None:
        self.settings = settings
        self.role = role
        self._url, self._query = _base_and_query(str(settings.base_url))
        self.base_url = settings.shown_url.rstrip("/")
        """The server's URL as messages show it (a key in it hidden)."""
        _check_url(self._url, self.base_url, role)
        if not (math.isfinite(settings.timeout_s) and settings.timeout_s > 0):
            raise CowpError(
                f"the {role.name}'s timeout must be a positive number of seconds, "
                f"not {settings.timeout_s}",
                hint="e.g. --llm-timeout 60",
            )
        self.max_retries = max(0, int(max_retries))
        self.model: str | None = settings.model
        """The model a 404 is about (the client sets it once it knows)."""
        self._http = httpx.Client(follow_redirects=False, trust_env=False)
        self._headers = {
            "Authorization": f"Bearer {settings.api_key or 'local'}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }

    def get(self, path: str) -> bytes:
        """The body of a successful GET (e.g. `/models`)."""
        return self.request("GET", path, None).body

    def post(self, path: str, payload: Any) -> bytes:
        """The body of a successful POST of `payload` as JSON."""
        return self.request("POST", path, payload).body

    def request(self, method: str, path: str, payload: Any) -> Exchange:
        """One call: tries until an answer, a final error, or `timeout_s` in all."""
        timeout_s = self.settings.timeout_s
        deadline = time.monotonic() + timeout_s
        content = None if payload is None else json.dumps(payload).encode("ascii")
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                exchange = self._exchange(method, path, content, deadline)
            except _DeadlineError:
                raise self._timed_out() from None
            except httpx.ConnectError:
                if last or not _pause(_backoff(attempt), deadline):
                    raise self._unreachable() from None
                continue
            except (httpx.TransportError, httpx.StreamError) as err:
                if isinstance(err, httpx.TimeoutException):
                    raise self._timed_out() from None
                if last or not _pause(_backoff(attempt), deadline):
                    raise self._broken(err) from None
                continue
            if exchange.too_large:
                raise self.garbage(
                    f"a reply of more than {MAX_REPLY_BYTES // 2**20} MiB is too large"
                )
            if 200 <= exchange.status < 300:
                return exchange
            if exchange.status not in RETRY_STATUSES or last:
                raise self._status_error(exchange)
            wait = _retry_after(exchange.headers)
            if wait is not None and wait > deadline - time.monotonic():
                raise CowpError(
                    f"the {self.role.name} at {self.base_url} answered HTTP {exchange.status} "
                    f"and asked to retry after {wait:g} s, more than the "
                    f"{max(0.0, deadline - time.monotonic()):.1f} s left of the "
                    f"{timeout_s:g} s allowed for the call.",
                    hint=self.role.timeout_hint,
                )
            if not _pause(wait if wait is not None else _backoff(attempt), deadline):
                raise self._status_error(exchange)
        raise AssertionError("unreachable: the last try returns or raises")

    def close(self) -> None:
        """Release the HTTP connections (the transport is unusable afterwards)."""
        self._http.close()

    def say(self, text: str) -> str:
        """Server-provided text fit for a message: no key, no escapes, short."""
        return scrub(text, self.settings.secrets)

    def garbage(self, what: str) -> CowpError:
        """The error for a reply that is not what the role expects (`what` says how)."""
        return CowpError(
            f"the {self.role.name} at {self.base_url} sent an answer that is not a usable "
            f"{self.role.reply_kind} ({self.say(what)}).",
            hint="make sure the URL points at an OpenAI-compatible /v1 endpoint",
        )

    # --- one exchange ---------------------------------------------------------------

    def _exchange(self, method: str, path: str, content: bytes | None, deadline: float) -> Exchange:
        """One HTTP exchange that returns by `deadline` whatever the server does.

        httpx's timeouts bound each socket operation, not a whole exchange: a server
        dripping a byte a second never trips them. So the exchange runs in a worker
        thread and this thread waits for it until the deadline (and stays interruptible
        by Ctrl-C). A worker left behind stops at its next read, or by its own timeout.
        """
        outcome: dict[str, Any] = {}
        done = threading.Event()
        cancelled = threading.Event()

        def work() -> None:
            # Ctrl-C and SIGTERM are for the waiting thread: a signal the kernel gave this
            # one would leave that thread asleep until the deadline.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            try:
                outcome["value"] = self._transfer(method, path, content, deadline, cancelled)
            except BaseException as err:  # handed to the waiting thread
                outcome["error"] = err
            finally:
                done.set()

        threading.Thread(target=work, name="cowp-model-request", daemon=True).start()
        # Short waits: a Ctrl-C the kernel handed to another thread (one a library
        # started with the signal unblocked) is raised here only when this thread runs
        # Python again, so it must not sleep until the deadline in one call.
        while not done.wait(min(WAKE_S, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                cancelled.set()
                raise _DeadlineError
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def _transfer(
        self,
        method: str,
        path: str,
        content: bytes | None,
        deadline: float,
        cancelled: threading.Event,
    ) -> Exchange:
        remaining = max(0.001, deadline - time.monotonic())
        with self._http.stream(
            method,
            self._url + path + self._query,
            content=content,
            headers=self._headers,
            timeout=httpx.Timeout(remaining),
        ) as response:
            limit = MAX_REPLY_BYTES if 200 <= response.status_code < 300 else MAX_ERROR_BYTES
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                if cancelled.is_set() or time.monotonic() > deadline:
                    raise _DeadlineError
                size += len(chunk)
                if size > limit:
                    if limit == MAX_ERROR_BYTES:
                        break  # enough of an error message
                    return Exchange(response.status_code, response.headers, b"", True)
                chunks.append(chunk)
            return Exchange(response.status_code, response.headers, b"".join(chunks))

    # --- errors ---------------------------------------------------------------------

    def _timed_out(self) -> CowpError:
        return CowpError(
            f"the {self.role.name} at {self.base_url} did not answer within "
            f"{self.settings.timeout_s:g} s.",
            hint=self.role.timeout_hint,
        )

    def _unreachable(self) -> CowpError:
        return CowpError(
            f"cannot reach the {self.role.name} at {self.base_url}.",
            hint=self.role.unreachable_hint,
        )

    def _broken(self, err: Exception) -> CowpError:
        return CowpError(
            f"the connection to the {self.role.name} at {self.base_url} broke before it "
            f"answered ({type(err).__name__}).",
            hint="check that the server is still running, and its log",
        )

    def _status_error(self, exchange: Exchange) -> CowpError:
        status = exchange.status
        message = self.say(error_message(exchange.body))
        where = f"the {self.role.name} at {self.base_url}"
        if status in (401, 403):
            return CowpError(
                f"{where} refused the API key (HTTP {status}).", hint=self.role.key_hint
            )
        if status == 404:
            return CowpError(
                f"{where} does not know model '{self.model}' (or the URL lacks /v1).",
                hint=self.role.model_hint,
            )
        if status == 429:
            return CowpError(
                f"{where} kept refusing: too many requests (HTTP 429: {message}).",
                hint="wait and run again, or allow more time (--llm-timeout)",
            )
        return CowpError(f"{where} answered HTTP {status}: {message}", hint=self.role.status_hint)


def _base_and_query(url: str) -> tuple[str, str]:
    """(`url` without its query, `?query` or ''): a server that takes its key in the
    query (`.../v1?api_key=...`) gets it after each request's path, where it belongs,
    not before (`/v1?api_key=.../chat/completions`)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.rstrip("/"), ""
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
    return base, f"?{parts.query}" if parts.query else ""


def _check_url(url: str, shown: str, role: ServerRole) -> None:
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        _ = parts.port  # raises for a port that is not a number
    except ValueError:
        valid = False
    if not valid:
        raise CowpError(
            f"the {role.name} URL {shown!r} is not an http(s) URL.",
            hint=f"give the server's base URL, e.g. {role.url_example}",
        )


WAKE_S = 0.2
"""How often a wait for a model's answer returns to Python (see `_exchange`)."""


def _pause(seconds: float, deadline: float) -> bool:
    """Sleep before another try; False when the deadline would pass first."""
    if time.monotonic() + seconds >= deadline:
        return False
    time.sleep(seconds)
    return True


def _backoff(attempt: int) -> float:
    return min(8.0, FIRST_BACKOFF_S * 2**attempt)


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a server asked us to wait (`retry-after-ms`, `Retry-After` as seconds or
    an HTTP date); None when it asked nothing usable."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        with contextlib.suppress(ValueError):
            value = float(raw_ms) / 1000.0
            if math.isfinite(value) and value >= 0:
                return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    with contextlib.suppress(ValueError):
        value = float(raw)
        return value if math.isfinite(value) and value >= 0 else None
    with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
        when = email.utils.parsedate_to_datetime(raw)
        return max(0.0, when.timestamp() - time.time())
    return None


__all__ = [
    "EMBEDDING_MODEL",
    "LANGUAGE_MODEL",
    "MAX_ERROR_BYTES",
    "RETRY_STATUSES",
    "VISION_MODEL",
    "Exchange",
    "ModelTransport",
    "ServerRole",
]
