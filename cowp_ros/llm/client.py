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
* Answers persist in an `AnswerCache` keyed by model and full prompt: a rerun costs
  nothing, and `usage.cache_hits` says so.

Every failure a user can fix (server unreachable, timeout, HTTP error, a reply that is
not a chat completion) becomes a `CowpError` that names the server URL and what to do.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from cowp_ros.errors import CowpError
from cowp_ros.llm.answer_cache import AnswerCache
from cowp_ros.llm.language_model import Choice, Example, Usage, YesNo
from cowp_ros.llm.settings import LLMSettings

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


def _token_word(token: str) -> str:
    return token.strip().strip(".,!:;\"'").lower()


def p_yes_from_top_logprobs(top: Sequence[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over first-token alternatives; None if neither appears."""
    p_yes = sum(math.exp(lp) for token, lp in top if _token_word(token) == "yes")
    p_no = sum(math.exp(lp) for token, lp in top if _token_word(token) == "no")
    if p_yes + p_no <= 0.0:
        return None
    return p_yes / (p_yes + p_no)


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
        self.base_url = str(settings.base_url).rstrip("/")
        self._client = openai_client(settings, max_retries)
        self._name = settings.model
        self.usage = Usage()
        self._usage_lock = threading.Lock()
        self.prefix_cached_tokens = 0
        """Prompt tokens the server reused from its prompt cache (when it reports them)."""
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
            models = self._call(lambda: self._client.models.list())
            ids = [model.id for model in getattr(models, "data", [])]
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
        if hit is not None:
            return YesNo(hit["answer"], hit["p_yes"], hit["text"], cached=True)
        reply = self._chat(messages, max_tokens=1, logprobs=True)
        text = _content(reply)
        p_yes = p_yes_from_top_logprobs(_first_token_top(reply))
        answer: bool | None = (p_yes >= 0.5) if p_yes is not None else parse_yes_no(text)
        if answer is None:  # first token was e.g. "The": let it say a few words
            follow_up = self._chat(messages, max_tokens=12, logprobs=False)
            text = _content(follow_up)
            answer = parse_yes_no(text)
        result = YesNo(answer, p_yes, text)
        self._store("yes_no", key, {"answer": answer, "p_yes": p_yes, "text": text})
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
        if hit is not None:
            return Choice(hit["index"], hit["option"], hit["text"], cached=True)
        longest = max((len(option) for option in options), default=8)
        reply = self._chat(messages, max_tokens=min(48, 4 + longest // 2), logprobs=False)
        text = _content(reply)
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
        hit = self._cached("complete", key)
        if hit is not None:
            return str(hit["text"])
        text = _content(self._chat(messages, max_tokens=max_tokens, logprobs=False))
        self._store("complete", key, {"text": text})
        return text

    def next_tokens(self, prompt: str, *, top: int = 20) -> list[tuple[str, float]]:
        """The `top` most likely next tokens after a raw text `prompt`, with log-probs.

        A plain completion (no chat template), one output token: what SayCan-style
        scoring of a fixed set of skills needs (`cowp_ros.llm.skill_scoring` walks
        the skills' words with it). Cached like every other answer.
        """
        key = {"prompt": prompt, "top": top, "method": "completion-top-logprobs"}
        hit = self._cached("next_tokens", key)
        if hit is not None:
            return [(str(token), float(lp)) for token, lp in hit["top"]]
        model = self.name
        started = time.monotonic()
        reply = self._call(
            lambda: self._client.completions.create(
                model=model, prompt=prompt, max_tokens=1, temperature=0.0, logprobs=top
            )
        )
        usage = getattr(reply, "usage", None)
        with self._usage_lock:
            self.usage.seconds += time.monotonic() - started
            self.usage.calls += 1
            self.usage.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.usage.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        if not getattr(reply, "choices", None):
            raise self._garbage("the completion has no choices")
        found = _completion_top(reply.choices[0])
        if not found:
            raise self._garbage("the completion has no log-probabilities")
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

    # --- plumbing ------------------------------------------------------------------

    def _messages(
        self, question: str, system: str | None, examples: Sequence[Example]
    ) -> list[dict[str, str]]:
        messages = [{"role": "system", "content": system or SYSTEM_PROMPT}]
        for example in examples:
            messages.append({"role": "user", "content": example.question})
            messages.append({"role": "assistant", "content": example.answer})
        messages.append({"role": "user", "content": question})
        return messages

    def _cached(self, kind: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.cache is None:
            return None
        try:
            hit = self.cache.get(self.name, kind, key)
        except Exception:
            return None
        if hit is not None:
            with self._usage_lock:
                self.usage.cache_hits += 1
        return hit

    def _store(self, kind: str, key: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
        if self.cache is None:
            return
        with contextlib.suppress(Exception):  # a full disk must not stop the robot
            self.cache.put(self.name, kind, key, answer)

    def _chat(self, messages: list[dict[str, str]], *, max_tokens: int, logprobs: bool) -> Any:
        extra: dict[str, Any] = {}
        if logprobs:
            extra = {"logprobs": True, "top_logprobs": _TOP_LOGPROBS}
        model = self.name
        started = time.monotonic()
        reply = self._call(
            lambda: self._client.chat.completions.create(
                model=model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=0.0,
                **extra,
            )
        )
        usage = getattr(reply, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        with self._usage_lock:  # ROS callbacks may ask from several threads
            self.usage.seconds += time.monotonic() - started
            self.usage.calls += 1
            self.usage.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.usage.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
            self.prefix_cached_tokens += int(getattr(details, "cached_tokens", 0) or 0)
        if not getattr(reply, "choices", None):
            raise self._garbage("the reply has no choices")
        return reply

    def _call(self, request: Callable[[], Any]) -> Any:
        """Run one request, turning the openai client's errors into user-facing ones."""
        try:
            return request()
        except openai.APITimeoutError as err:
            raise CowpError(
                f"the LLM server at {self.base_url} did not answer within "
                f"{self.settings.timeout_s:.0f} s.",
                hint="the machine may be busy: raise the timeout (--llm-timeout), or use a "
                "smaller model",
            ) from err
        except openai.APIConnectionError as err:
            raise CowpError(
                f"cannot reach the LLM server at {self.base_url}.",
                hint="start it (e.g. 'cowp llm serve') or fix OPENAI_BASE_URL / --llm-url; "
                "unset them to use the embedded local model",
            ) from err
        except openai.AuthenticationError as err:
            raise CowpError(
                f"the LLM server at {self.base_url} refused the API key.",
                hint="set OPENAI_API_KEY (or --llm-key) to a key it accepts",
            ) from err
        except openai.NotFoundError as err:
            raise CowpError(
                f"the LLM server at {self.base_url} does not know model '{self._name}' "
                "(or the URL lacks /v1).",
                hint="set OPENAI_MODEL (or --llm-model) to one it serves",
            ) from err
        except openai.APIStatusError as err:
            raise CowpError(
                f"the LLM server at {self.base_url} answered HTTP {err.status_code}: "
                f"{str(err.message)[:300]}",
                hint="check the server's log; retry when it is healthy",
            ) from err
        except openai.APIError as err:  # e.g. a body that is not a chat completion
            raise self._garbage(str(err)[:300]) from err
        except (ValueError, TypeError) as err:  # a body that is not JSON at all
            raise self._garbage(f"{type(err).__name__}: {str(err)[:200]}") from err

    def _garbage(self, what: str) -> CowpError:
        return CowpError(
            f"the LLM server at {self.base_url} sent an answer that is not a usable chat "
            f"completion ({what}).",
            hint="make sure the URL points at an OpenAI-compatible /v1 endpoint",
        )


def _content(reply: Any) -> str:
    message = getattr(reply.choices[0], "message", None)
    return str(getattr(message, "content", "") or "").strip()


def _first_token_top(reply: Any) -> list[tuple[str, float]]:
    """The first generated token's alternatives as (token, logprob) pairs, if any."""
    logprobs = getattr(reply.choices[0], "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return []
    first = content[0]
    alternatives = list(getattr(first, "top_logprobs", None) or [])
    pairs = [(str(alt.token), float(alt.logprob)) for alt in alternatives]
    if not pairs:
        pairs = [(str(first.token), float(first.logprob))]
    return pairs


def _completion_top(choice: Any) -> list[tuple[str, float]]:
    """A completion choice's first-token alternatives, in either log-prob layout.

    OpenAI's legacy layout is `logprobs.top_logprobs[0]` (token -> log-prob); llama.cpp
    answers with the chat layout (`logprobs.content[0].top_logprobs`). Both are read.
    """
    logprobs = getattr(choice, "logprobs", None)
    if logprobs is None:
        return []
    content = getattr(logprobs, "content", None)
    if content is None and isinstance(logprobs, dict):
        content = logprobs.get("content")
    if content is None:
        extra = getattr(logprobs, "model_extra", None) or {}
        content = extra.get("content")
    if content:
        first = content[0]
        get = first.get if isinstance(first, dict) else lambda k, d=None: getattr(first, k, d)
        alternatives = get("top_logprobs") or [{"token": get("token"), "logprob": get("logprob")}]
        pairs = []
        for alt in alternatives:
            alt_get = alt.get if isinstance(alt, dict) else lambda k, a=alt: getattr(a, k, None)
            pairs.append((str(alt_get("token")), float(alt_get("logprob"))))
        return pairs
    legacy = getattr(logprobs, "top_logprobs", None)
    if legacy:
        return [(str(token), float(lp)) for token, lp in dict(legacy[0]).items()]
    return []
