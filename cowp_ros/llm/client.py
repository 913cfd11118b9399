"""`LanguageModel` over any OpenAI-compatible chat server (the embedded one or the user's).

Prompt economy, because a 1.5B model on two CPU cores answers at about 10 tokens/s:

* Yes/no questions ask for a single token with `logprobs`, and the verdict is
  P(yes) / (P(yes) + P(no)) summed over the token variants (" Yes", "yes", "YES", ...)
  among the first token's top log-probabilities. One output token, and a graded
  confidence the monitor can threshold or compare. When the server returns no
  log-probabilities, or the first token is neither, the reply text is parsed, and if
  that is still undecided one short follow-up asks for a few words.
* Every question starts with the same system prompt and then the caller's few-shot
  examples, so llama.cpp's prompt cache re-evaluates only the question's own tokens.
* Answers persist in an `AnswerCache` keyed by the server (or the embedded model's
  verified file), the model and the full prompt: a rerun costs nothing, and
  `usage.cache_hits` says so.

Every reply goes through one validated parse (`cowp_ros.llm.completion`): P(yes)
is a finite number in [0, 1] or None, answers are clean text of a bounded size. The
transport is plain HTTP (httpx) so that the client decides what is read: at most
`completion.MAX_REPLY_BYTES` of a body, and nothing after the call's deadline.
`timeout_s` bounds the whole call, every try and every wait a server asks for with
`Retry-After` included; a server that asks for more time than is left is not waited for.

Every failure a user can fix (server unreachable, timeout, HTTP error, a reply that is
not a chat completion) becomes a `CowpError` that names the server URL (with any key in
it hidden) and what to do.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import openai

from cowp_ros.errors import CowpError
from cowp_ros.llm.answer_cache import AnswerCache
from cowp_ros.llm.completion import (
    MAX_REPLY_BYTES,
    ChatReply,
    ReplyError,
    TokenLogprob,
    error_message,
    max_answer_chars,
    p_yes,
    parse_chat_reply,
    parse_model_ids,
    parse_next_tokens_reply,
    parse_text_reply,
)
from cowp_ros.llm.language_model import Choice, Example, Usage, YesNo
from cowp_ros.llm.settings import LLMSettings, scrub

SYSTEM_PROMPT = (
    "You are the commonsense reasoner of a household service robot. Use everyday "
    "knowledge of objects, their states and what they can be used for. When a question "
    "can be answered with yes or no, answer with one word: Yes or No. When asked to pick "
    "one of several options, answer with the name of exactly one option and nothing else."
)
"""Shared by every kind of question so the server's prompt cache keeps it evaluated."""

YES_WORDS = frozenset({"yes", "yeah", "true", "suitable"})
NO_WORDS = frozenset({"no", "not", "false", "unsuitable", "never"})
_TOP_LOGPROBS = 20
_WORD = re.compile(r"[a-z]+")


def parse_yes_no(text: str) -> bool | None:
    """Read a verdict from free text: the first yes-like or no-like word decides.

    "No, it is not suitable" -> False; "Yes." -> True; "It is not suitable" -> False;
    "I cannot tell" -> None. Deliberately conservative: anything else is None.
    """
    for word in _WORD.findall(text.lower()):
        if word in NO_WORDS:
            return False
        if word in YES_WORDS:
            return True
    return None


def p_yes_from_top_logprobs(top: Sequence[tuple[Any, Any]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over first-token alternatives; None if neither appears
    or any pair is not a (token, log-probability) (see `completion.p_yes`)."""
    alternatives = []
    for token, logprob in top:
        valid = _valid_alternative(token, logprob)
        if valid is None:
            return None
        alternatives.append(valid)
    return p_yes(alternatives)


def _valid_alternative(token: Any, logprob: Any) -> TokenLogprob | None:
    if not isinstance(token, str) or isinstance(logprob, bool):
        return None
    if not isinstance(logprob, int | float) or math.isnan(logprob) or logprob > 1e-3:
        return None
    return TokenLogprob(token, min(float(logprob), 0.0))


def match_option(text: str, options: Sequence[str]) -> int | None:
    """Which option an answer names: exact, then a leading number, then the earliest
    (and, at the same place, the longest) option mentioned in the text."""
    cleaned = text.strip().strip(".\"'`*").strip().lower()
    lowered = [option.strip().lower() for option in options]
    if cleaned in lowered:
        return lowered.index(cleaned)
    number = re.match(r"^\(?(\d+)[).:]?(\s|$)", cleaned)
    if number and 1 <= int(number.group(1)) <= len(options):
        return int(number.group(1)) - 1
    best: tuple[int, int, int] | None = None  # (position, -length, index)
    for index, option in enumerate(lowered):
        found = re.search(rf"(?<![a-z]){re.escape(option)}(?![a-z])", cleaned)
        if found:
            candidate = (found.start(), -len(option), index)
            best = candidate if best is None or candidate < best else best
    return best[2] if best else None


@dataclass(frozen=True)
class RankedOption:
    """One candidate with the model's confidence that it suits the task."""

    option: str
    p_yes: float | None
    answer: bool | None

    @property
    def score(self) -> float:
        """P(yes) where known, else 1/0/0.5 from the text verdict."""
        if self.p_yes is not None:
            return self.p_yes
        return {True: 1.0, False: 0.0, None: 0.5}[self.answer]


def openai_client(settings: LLMSettings, max_retries: int = 1) -> openai.OpenAI:
    """The `openai` client for a configured server (any key for a local one: the client
    refuses to start without)."""
    return openai.OpenAI(
        base_url=str(settings.base_url).rstrip("/"),
        api_key=settings.api_key or "local",
        timeout=settings.timeout_s,
        max_retries=max_retries,
    )


RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Answers worth another try (as the `openai` client retries them)."""
FIRST_BACKOFF_S = 0.5
MAX_ERROR_BYTES = 64 * 1024
"""An error body is read up to this much: its message is all a person needs."""


class _DeadlineError(Exception):
    """The call's time is up (raised inside the transport, mapped in `_request`)."""


@dataclass(frozen=True)
class _Exchange:
    """One HTTP exchange as read: the status, headers and (bounded) body."""

    status: int
    headers: httpx.Headers
    body: bytes
    too_large: bool = False


class OpenAICompatibleModel:
    """The `LanguageModel` the stack uses: an OpenAI-compatible server plus answer cache."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        max_retries: int = 1,
        cache: AnswerCache | None = None,
    ) -> None:
        if not settings.configured:
            raise CowpError(
                "no LLM server is configured.",
                hint="use cowp_ros.llm.endpoint.llm_endpoint() to start the embedded "
                "model, or set OPENAI_BASE_URL",
            )
        self.settings = settings
        self._url = str(settings.base_url).rstrip("/")
        self.base_url = settings.shown_url.rstrip("/")
        """The server's URL as messages show it (a key in it hidden)."""
        _check_url(self._url, self.base_url)
        if not (math.isfinite(settings.timeout_s) and settings.timeout_s > 0):
            raise CowpError(
                f"the LLM timeout must be a positive number of seconds, not {settings.timeout_s}",
                hint="e.g. --llm-timeout 60",
            )
        self.max_retries = max(0, int(max_retries))
        self._http = httpx.Client(follow_redirects=False, trust_env=False)
        self._headers = {
            "Authorization": f"Bearer {settings.api_key or 'local'}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self._name = settings.model
        self.usage = Usage()
        self._usage_lock = threading.Lock()
        self.prefix_cached_tokens = 0
        """Prompt tokens the server reused from its prompt cache (when it reports them)."""
        self.dropped_logprobs = 0
        """Replies whose log-probabilities were unusable (the text decided instead)."""
        if cache is not None:
            self.cache: AnswerCache | None = cache
        elif settings.cache_path is not None:
            try:
                self.cache = AnswerCache(settings.cache_path)
            except Exception:  # an unusable cache costs speed, never correctness
                self.cache = None
        else:
            self.cache = None

    # --- the LanguageModel protocol ------------------------------------------------

    @property
    def name(self) -> str:
        """The server's model id (asked from `/models` when the settings name none)."""
        if self._name is None:
            exchange = self._request("GET", "/models", None)
            try:
                ids = parse_model_ids(exchange.body)
            except ReplyError as err:
                raise self._garbage(str(err)) from None
            if not ids:
                raise self._garbage("its /models list is empty")
            self._name = ids[0]
        return self._name

    def ask_yes_no(
        self,
        question: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> YesNo:
        """One token with log-probabilities; text parsing and one follow-up as fallbacks."""
        messages = self._messages(question, system, examples)
        key = {"messages": messages, "method": "first-token-logprobs"}
        hit = self._cached("yes_no", key)
        if hit is not None and _valid_yes_no(hit):
            return YesNo(hit["answer"], hit["p_yes"], hit["text"], cached=True)
        reply = self._chat(messages, max_tokens=1, logprobs=True)
        text = reply.text
        probability = p_yes(reply.top)
        answer: bool | None = (probability >= 0.5) if probability is not None else None
        if answer is None:
            answer = parse_yes_no(text)
        if answer is None:  # first token was e.g. "The": let it say a few words
            text = self._chat(messages, max_tokens=12, logprobs=False).text
            answer = parse_yes_no(text)
        result = YesNo(answer, probability, text)
        self._store("yes_no", key, {"answer": answer, "p_yes": probability, "text": text})
        return result

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        """A short answer matched against `options` (the caller lists them in the question)."""
        messages = self._messages(question, system, examples)
        key = {"messages": messages, "options": list(options)}
        hit = self._cached("choice", key)
        if hit is not None and _valid_choice(hit, options):
            return Choice(hit["index"], hit["option"], hit["text"], cached=True)
        longest = max((len(option) for option in options), default=8)
        reply = self._chat(messages, max_tokens=min(48, 4 + longest // 2), logprobs=False)
        text = reply.text
        index = match_option(text, options)
        option = options[index] if index is not None else None
        self._store("choice", key, {"index": index, "option": option, "text": text})
        return Choice(index, option, text)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        """Free text, greedy decoding (temperature 0) so the cache stays truthful."""
        messages = self._messages(prompt, system, examples)
        key = {"messages": messages, "max_tokens": max_tokens}
        text_hit = self._cached_text("complete", key, max_tokens)
        if text_hit is not None:
            return text_hit
        text = self._chat(messages, max_tokens=max_tokens, logprobs=False).text
        self._store("complete", key, {"text": text})
        return text

    def continue_text(self, prompt: str, *, max_tokens: int = 64, stop: Sequence[str] = ()) -> str:
        """The model's own continuation of a raw text `prompt`, greedy, up to a `stop`.

        A plain completion (no chat template): what a method that has the model
        complete a document needs (LMZSP's next plan step, as the paper's completion
        models wrote it). Cached like every other answer.
        """
        key = {"prompt": prompt, "max_tokens": max_tokens, "stop": list(stop)}
        text_hit = self._cached_text("continue_text", key, max_tokens)
        if text_hit is not None:
            return text_hit
        payload: dict[str, Any] = {
            "model": self.name,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": 0.0,
        }
        if stop:
            payload["stop"] = list(stop)
        reply = self._post(
            "/completions", payload, lambda body: parse_text_reply(body, max_tokens=max_tokens)
        )
        self._store("continue_text", key, {"text": reply.text})
        return reply.text

    def next_tokens(self, prompt: str, *, top: int = 20) -> list[tuple[str, float]]:
        """The `top` most likely next tokens after a raw text `prompt`, with log-probs.

        A plain completion (no chat template), one output token: what SayCan-style
        scoring of a fixed set of skills needs (`cowp_ros.bench.skill_scoring` walks the
        skills' words with it). Cached like every other answer.
        """
        key = {"prompt": prompt, "top": top, "method": "completion-top-logprobs"}
        hit = self._cached("next_tokens", key)
        if hit is not None and isinstance(hit.get("top"), list):
            return [(str(token), float(lp)) for token, lp in hit["top"]]
        payload = {
            "model": self.name,
            "prompt": prompt,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": top,
        }
        reply = self._post("/completions", payload, parse_next_tokens_reply)
        found = [(alt.token, alt.logprob) for alt in reply.top[:top]]
        self._store("next_tokens", key, {"top": [list(pair) for pair in found]})
        return found

    # --- batching helpers ----------------------------------------------------------

    def rank(
        self,
        questions: Mapping[str, str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> list[RankedOption]:
        """Rank candidates by P(yes) of their own question, most suitable first.

        One one-token call per candidate, each sharing the cached prefix: on the check
        set this kept accuracy where one combined question did not (see `ask_batch`).
        """
        ranked = [
            RankedOption(option, verdict.p_yes, verdict.answer)
            for option, question in questions.items()
            for verdict in [self.ask_yes_no(question, system=system, examples=examples)]
        ]
        return sorted(ranked, key=lambda item: item.score, reverse=True)

    def ask_batch(
        self,
        questions: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> list[YesNo]:
        """Several yes/no questions in one call, answered as numbered lines.

        Cheaper in prompt tokens, but every answer costs about four output tokens and
        small models lose track in long lists; `cowp llm eval --batch` measures it.
        """
        numbered = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
        prompt = (
            "Answer each numbered question with Yes or No, one line per question, "
            f"in the form '1. Yes'.\n{numbered}"
        )
        text = self.complete(
            prompt, system=system, examples=examples, max_tokens=6 * len(questions) + 8
        )
        verdicts: dict[int, bool | None] = {}
        for line in text.splitlines():
            found = re.match(r"\s*(\d+)[.):]\s*(.*)", line)
            if found:
                verdicts.setdefault(int(found.group(1)), parse_yes_no(found.group(2)))
        return [
            YesNo(verdicts.get(i), None, text, cached=False) for i in range(1, len(questions) + 1)
        ]

    def close(self) -> None:
        """Release the HTTP connections (the object is unusable afterwards)."""
        self._http.close()

    # --- plumbing ------------------------------------------------------------------

    def _messages(
        self, question: str, system: str | None, examples: Sequence[Example]
    ) -> list[dict[str, str]]:
        messages = [{"role": "system", "content": _utf8(system or SYSTEM_PROMPT)}]
        for example in examples:
            messages.append({"role": "user", "content": _utf8(example.question)})
            messages.append({"role": "assistant", "content": _utf8(example.answer)})
        messages.append({"role": "user", "content": _utf8(question)})
        return messages

    def _cached(self, kind: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.cache is None:
            return None
        try:
            hit = self.cache.get(self._scope(), kind, key)
        except Exception:
            return None
        if hit is not None:
            with self._usage_lock:
                self.usage.cache_hits += 1
        return hit

    def _cached_text(self, kind: str, key: Mapping[str, Any], max_tokens: int) -> str | None:
        """A cached free-text answer, if it is text no longer than the request allows."""
        hit = self._cached(kind, key)
        text = hit.get("text") if hit is not None else None
        if isinstance(text, str) and len(text) <= max_answer_chars(max_tokens):
            return text
        return None

    def _store(self, kind: str, key: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
        if self.cache is None:
            return
        with contextlib.suppress(Exception):  # a full disk must not stop the robot
            self.cache.put(self._scope(), kind, key, answer, model=self.name)

    def _scope(self) -> str:
        """The cache scope: the settings' scope, else this server's URL and model."""
        if self.settings.cache_scope:
            return self.settings.cache_scope
        return f"{self.base_url}|{self.name}"

    def _chat(
        self, messages: list[dict[str, str]], *, max_tokens: int, logprobs: bool
    ) -> ChatReply:
        payload: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0.0,
        }
        if logprobs:
            payload.update(logprobs=True, top_logprobs=_TOP_LOGPROBS)
        return self._post(
            "/chat/completions", payload, lambda body: parse_chat_reply(body, max_tokens=max_tokens)
        )

    def _post(self, path: str, payload: Any, parse: Callable[[bytes], ChatReply]) -> ChatReply:
        """One completion request: its reply validated by `parse`, its usage counted."""
        started = time.monotonic()
        exchange = self._request("POST", path, payload)
        try:
            reply = parse(exchange.body)
        except ReplyError as err:
            raise self._garbage(str(err)) from None
        with self._usage_lock:  # ROS callbacks may ask from several threads
            self.usage.seconds += time.monotonic() - started
            self.usage.calls += 1
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            self.prefix_cached_tokens += reply.cached_tokens
            if reply.logprobs_note:
                self.dropped_logprobs += 1
        return reply

    # --- transport -----------------------------------------------------------------

    def _request(self, method: str, path: str, payload: Any) -> _Exchange:
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
            except httpx.ConnectError as err:
                if last or not self._pause(_backoff(attempt), deadline):
                    raise self._unreachable(err) from None
                continue
            except (httpx.TransportError, httpx.StreamError) as err:
                if isinstance(err, httpx.TimeoutException):
                    raise self._timed_out() from None
                if last or not self._pause(_backoff(attempt), deadline):
                    raise self._broken(err) from None
                continue
            if exchange.too_large:
                raise self._garbage(
                    f"a reply of more than {MAX_REPLY_BYTES // 2**20} MiB is too large"
                )
            if 200 <= exchange.status < 300:
                return exchange
            if exchange.status not in RETRY_STATUSES or last:
                raise self._status_error(exchange)
            wait = _retry_after(exchange.headers)
            if wait is not None and wait > deadline - time.monotonic():
                raise CowpError(
                    f"the LLM server at {self.base_url} answered HTTP {exchange.status} and "
                    f"asked to retry after {wait:g} s, more than the "
                    f"{max(0.0, deadline - time.monotonic()):.1f} s left of the "
                    f"{timeout_s:g} s allowed for the call.",
                    hint="wait and run again, or allow more time (--llm-timeout)",
                )
            if not self._pause(wait if wait is not None else _backoff(attempt), deadline):
                raise self._status_error(exchange)
        raise AssertionError("unreachable: the last try returns or raises")

    @staticmethod
    def _pause(seconds: float, deadline: float) -> bool:
        """Sleep before another try; False when the deadline would pass first."""
        if time.monotonic() + seconds >= deadline:
            return False
        time.sleep(seconds)
        return True

    def _exchange(
        self, method: str, path: str, content: bytes | None, deadline: float
    ) -> _Exchange:
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
            try:
                outcome["value"] = self._transfer(method, path, content, deadline, cancelled)
            except BaseException as err:  # handed to the waiting thread
                outcome["error"] = err
            finally:
                done.set()

        threading.Thread(target=work, name="cowp-llm-request", daemon=True).start()
        if not done.wait(max(0.0, deadline - time.monotonic())):
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
    ) -> _Exchange:
        remaining = max(0.001, deadline - time.monotonic())
        with self._http.stream(
            method,
            self._url + path,
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
                    return _Exchange(response.status_code, response.headers, b"", True)
                chunks.append(chunk)
            return _Exchange(response.status_code, response.headers, b"".join(chunks))

    # --- errors --------------------------------------------------------------------

    def _say(self, text: str) -> str:
        """Server-provided text fit for a message: no key, no escapes, short."""
        return scrub(text, self.settings.secrets)

    def _timed_out(self) -> CowpError:
        return CowpError(
            f"the LLM server at {self.base_url} did not answer within "
            f"{self.settings.timeout_s:g} s.",
            hint="the machine may be busy: raise the timeout (--llm-timeout), or use a "
            "smaller model",
        )

    def _unreachable(self, err: Exception) -> CowpError:
        return CowpError(
            f"cannot reach the LLM server at {self.base_url}.",
            hint="start it (e.g. 'cowp llm serve') or fix OPENAI_BASE_URL / --llm-url; "
            "unset them to use the embedded local model",
        )

    def _broken(self, err: Exception) -> CowpError:
        return CowpError(
            f"the connection to the LLM server at {self.base_url} broke before it answered "
            f"({type(err).__name__}).",
            hint="check that the server is still running, and its log",
        )

    def _status_error(self, exchange: _Exchange) -> CowpError:
        status = exchange.status
        message = self._say(error_message(exchange.body))
        if status in (401, 403):
            return CowpError(
                f"the LLM server at {self.base_url} refused the API key (HTTP {status}).",
                hint="set OPENAI_API_KEY (or --llm-key) to a key it accepts",
            )
        if status == 404:
            return CowpError(
                f"the LLM server at {self.base_url} does not know model '{self._name}' "
                "(or the URL lacks /v1).",
                hint="set OPENAI_MODEL (or --llm-model) to one it serves",
            )
        if status == 429:
            return CowpError(
                f"the LLM server at {self.base_url} kept refusing: too many requests "
                f"(HTTP 429: {message}).",
                hint="wait and run again, or allow more time (--llm-timeout)",
            )
        return CowpError(
            f"the LLM server at {self.base_url} answered HTTP {status}: {message}",
            hint="check the server's log; retry when it is healthy",
        )

    def _garbage(self, what: str) -> CowpError:
        return CowpError(
            f"the LLM server at {self.base_url} sent an answer that is not a usable chat "
            f"completion ({self._say(what)}).",
            hint="make sure the URL points at an OpenAI-compatible /v1 endpoint",
        )


def _check_url(url: str, shown: str) -> None:
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        _ = parts.port  # raises for a port that is not a number
    except ValueError:
        valid = False
    if not valid:
        raise CowpError(
            f"the LLM server URL {shown!r} is not an http(s) URL.",
            hint="give the server's base URL, e.g. http://127.0.0.1:8080/v1",
        )


def _utf8(text: str) -> str:
    """Text every UTF-8 encoder takes (a lone surrogate from undecodable input -> '?')."""
    return text.encode("utf-8", errors="replace").decode("utf-8")


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


def _valid_yes_no(hit: Mapping[str, Any]) -> bool:
    """A cached verdict we may serve: the shapes `ask_yes_no` stores, P(yes) in [0, 1]."""
    probability = hit.get("p_yes")
    return (
        hit.get("answer") in (True, False, None)
        and isinstance(hit.get("text"), str)
        and (
            probability is None
            or (
                isinstance(probability, int | float)
                and not isinstance(probability, bool)
                and 0.0 <= probability <= 1.0
            )
        )
    )


def _valid_choice(hit: Mapping[str, Any], options: Sequence[str]) -> bool:
    index = hit.get("index")
    if index is None:
        return hit.get("option") is None and isinstance(hit.get("text"), str)
    return (
        isinstance(index, int)
        and not isinstance(index, bool)
        and 0 <= index < len(options)
        and hit.get("option") == options[index]
        and isinstance(hit.get("text"), str)
    )
