"""The one validated parse of what an OpenAI-compatible server answers.

Every field the client uses is checked here and nowhere else: the body (size, UTF-8,
JSON), `choices`, the message content, the first token's log-probabilities and the
usage counts. What is wrong becomes a `ReplyError` naming the field (the client turns it
into a `CowpError` with the server's URL), or one of two documented fallbacks:

* log-probabilities that cannot be a distribution (a string, null, NaN, +inf, a value
  above 0, a token that is not text, a shape we do not know) are dropped, and the
  verdict comes from the answer's text as it does for a server that sends none; the
  reason is kept in `ChatReply.logprobs_note`;
* usage counts that are not non-negative integers count as 0.

So P(yes) is always a finite number in [0, 1] or None, and no NaN can reach a verdict,
the answer cache or a report. Answer text is cleaned of escape and control characters
(`cowp_ros.safe_text`) and refused when it is longer than the request allowed: a server
that ignores `max_tokens` must not fill memory, the cache and the terminal.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cowp_ros.safe_text import clean

MAX_REPLY_BYTES = 2 * 2**20
"""A reply body is read up to this size and refused beyond it. A one-token answer with
20 alternatives is about 3 kB; the longest answer the stack asks for (160 tokens) is
under 2 kB without log-probabilities."""

CHARS_PER_TOKEN = 32
BASE_ANSWER_CHARS = 256
"""An answer may have BASE + CHARS_PER_TOKEN * max_tokens characters: generous for any
tokenizer (English averages 4 characters a token), small against a runaway server."""

MAX_TOKEN_CHARS = 128
MAX_ALTERNATIVES = 100
LOGPROB_TOLERANCE = 1e-3
"""Servers round; a log-probability a little above 0 is 0, one above this is absurd."""
MAX_COUNT = 10**9


class ReplyError(Exception):
    """What is wrong with a reply, in words (the client adds the server and the hint)."""


@dataclass(frozen=True)
class TokenLogprob:
    """One alternative for the first generated token: finite or -inf, and <= 0."""

    token: str
    logprob: float


@dataclass(frozen=True)
class ChatReply:
    """A chat completion, validated."""

    text: str
    top: tuple[TokenLogprob, ...] = ()
    """The first token's alternatives; empty when the server sent none (or unusable ones)."""
    logprobs_note: str = ""
    """Why log-probabilities were dropped ("" when there were none, or they were fine)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


def max_answer_chars(max_tokens: int) -> int:
    """The longest answer text accepted for a request of `max_tokens`."""
    return BASE_ANSWER_CHARS + CHARS_PER_TOKEN * max(1, max_tokens)


def decode_json(body: bytes) -> Any:
    """The body as JSON; NaN and Infinity are read (and later refused field by field)."""
    if len(body) > MAX_REPLY_BYTES:
        raise ReplyError(f"a reply of more than {MAX_REPLY_BYTES // 2**20} MiB is too large")
    if not body.strip():
        raise ReplyError("an empty reply")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ReplyError(f"the reply is not UTF-8 (byte {err.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ReplyError("the reply's JSON is nested too deeply") from None
    except json.JSONDecodeError as err:
        raise ReplyError(f"the reply is not JSON ({err.msg} at character {err.pos})") from None
    except ValueError as err:  # e.g. a number too long to convert
        raise ReplyError(f"the reply is not JSON ({err})") from None


def _first_choice(body: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reply as a JSON object and its first choice (an object too)."""
    data = decode_json(body)
    if not isinstance(data, dict):
        raise ReplyError(f"the reply is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ReplyError("the reply has no choices")
    if not isinstance(choices[0], dict):
        raise ReplyError("the reply's first choice is not an object")
    return data, choices[0]


def _answer_text(value: Any, what: str, max_tokens: int) -> str:
    """An answer's text: a string (None reads as empty) within the size the request allows."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ReplyError(f"{what} is a {type(value).__name__}, not text")
    limit = max_answer_chars(max_tokens)
    if len(value) > limit:
        raise ReplyError(
            f"an answer of {len(value):,} characters to a request for at most "
            f"{max_tokens} token(s) (limit {limit:,}) is too large"
        )
    return value


def parse_chat_reply(body: bytes, *, max_tokens: int) -> ChatReply:
    """Validate a `/chat/completions` body; raise `ReplyError` when it is not usable."""
    data, choice = _first_choice(body)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ReplyError("the reply's first choice has no message")
    content = _answer_text(message.get("content"), "the message content", max_tokens)
    top, note = _first_token_alternatives(choice.get("logprobs"))
    found = data.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    details = usage.get("prompt_tokens_details")
    return ChatReply(
        text=clean(content).strip(),
        top=top,
        logprobs_note=note,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cached_tokens=_count(details.get("cached_tokens") if isinstance(details, dict) else 0),
    )


def parse_text_reply(body: bytes, *, max_tokens: int) -> ChatReply:
    """Validate a plain `/completions` body (a continuation of a raw prompt): its first
    choice's text, within the size a request of `max_tokens` allows."""
    data, choice = _first_choice(body)
    text = _answer_text(choice.get("text"), "the completion text", max_tokens)
    found = data.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    return ChatReply(
        text=clean(text),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )


def parse_next_tokens_reply(body: bytes) -> ChatReply:
    """Validate a plain `/completions` body asked for one token with log-probabilities:
    the first token's alternatives, in the chat layout llama.cpp sends
    (`logprobs.content[0].top_logprobs`) or OpenAI's legacy one
    (`logprobs.top_logprobs[0]`, token -> log-probability)."""
    data, choice = _first_choice(body)
    logprobs = choice.get("logprobs")
    top, note = _first_token_alternatives(logprobs)
    if not top and isinstance(logprobs, dict) and isinstance(logprobs.get("top_logprobs"), list):
        legacy = logprobs["top_logprobs"][:1]
        if legacy and isinstance(legacy[0], dict):
            pairs = [{"token": token, "logprob": value} for token, value in legacy[0].items()]
            alternatives = [_alternative(entry) for entry in pairs[:MAX_ALTERNATIVES]]
            top = tuple(alt for alt in alternatives if alt is not None)
    if not top:
        raise ReplyError(f"the completion has no usable log-probabilities ({note or 'none'})")
    found = data.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    return ChatReply(
        text="",
        top=top,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
    )


def parse_model_ids(body: bytes) -> list[str]:
    """The model ids of a `/models` reply (text ids only, cleaned)."""
    data = decode_json(body)
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ReplyError("the /models reply has no data list")
    ids = [
        clean(entry["id"], newlines=False)[:MAX_TOKEN_CHARS]
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("id"), str)
    ]
    return [model_id for model_id in ids if model_id.strip()]


def error_message(body: bytes) -> str:
    """The human part of an error body (`error.message`, or the text), cleaned and short."""
    text = body[:4096].decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        found = error.get("message") if isinstance(error, dict) else error
        if isinstance(found, str):
            text = found
        elif isinstance(data.get("message"), str):
            text = data["message"]
    text = " ".join(clean(text, newlines=False).split())
    return text[:300]


def p_yes(top: Sequence[TokenLogprob]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first token's alternatives; None if neither
    word is among them (or both have probability 0). Finite, within [0, 1]."""
    yes = sum(math.exp(alt.logprob) for alt in top if _word(alt.token) == "yes")
    no = sum(math.exp(alt.logprob) for alt in top if _word(alt.token) == "no")
    total = yes + no
    if not math.isfinite(total) or total <= 0.0:
        return None
    return min(1.0, max(0.0, yes / total))


def _word(token: str) -> str:
    return token.strip().strip(".,!:;\"'").lower()


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value if 0 <= value <= MAX_COUNT else 0


def _logprob(value: Any) -> float | None:
    """A usable log-probability, or None: a real number, not NaN, at most ~0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if math.isnan(number) or number > LOGPROB_TOLERANCE:
        return None
    return min(number, 0.0)


def _token(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_TOKEN_CHARS:
        return None
    return clean(value, newlines=False)


def _alternative(entry: Any) -> TokenLogprob | None:
    if not isinstance(entry, dict):
        return None
    token, logprob = _token(entry.get("token")), _logprob(entry.get("logprob"))
    if token is None or logprob is None:
        return None
    return TokenLogprob(token, logprob)


def _first_token_alternatives(logprobs: Any) -> tuple[tuple[TokenLogprob, ...], str]:
    """(alternatives, note): the first token's top log-probabilities, all valid, or ()
    with the reason they were dropped. Either every alternative is valid or none is
    used: P(yes) over a partly dropped list would be a different number."""
    if logprobs is None:
        return (), ""
    if not isinstance(logprobs, dict):
        return (), "logprobs is not an object"
    content = logprobs.get("content")
    if content is None:
        return (), ""
    if not isinstance(content, list):
        return (), "logprobs.content is not a list"
    if not content:
        return (), ""
    first = content[0]
    if not isinstance(first, dict):
        return (), "the first token's logprobs are not an object"
    raw = first.get("top_logprobs")
    if raw is None or raw == []:
        own = _alternative(first)
        if own is None:
            return (), "the first token's own logprob is not a log-probability"
        return (own,), ""
    if isinstance(raw, dict):  # the legacy completions shape: {token: logprob}
        pairs = [{"token": token, "logprob": value} for token, value in raw.items()]
    elif isinstance(raw, list):
        pairs = raw
    else:
        return (), f"top_logprobs is a {type(raw).__name__}"
    if len(pairs) > MAX_ALTERNATIVES:
        return (), f"{len(pairs)} alternatives for one token"
    alternatives = [_alternative(entry) for entry in pairs]
    if any(alt is None for alt in alternatives):
        return (), "an alternative is not a (token, log-probability) pair"
    return tuple(alt for alt in alternatives if alt is not None), ""


YES_WORDS = frozenset({"yes", "yeah", "true", "suitable"})
NO_WORDS = frozenset({"no", "not", "false", "unsuitable", "never"})
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
