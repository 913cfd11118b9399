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
is a finite number in [0, 1] or None, answers are clean text of a bounded size. Requests
go through `cowp_ros.llm.transport.ModelTransport`, the one transport of every model
client: a deadline on the whole call, retries, size caps, and errors a user can act on
that name the server with any key hidden.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.llm.answer_cache import AnswerCache
from cowp_ros.llm.cached_answers import CachedAnswers, open_cache
from cowp_ros.llm.completion import (
    ChatReply,
    ReplyError,
    match_option,
    p_yes,
    parse_chat_reply,
    parse_model_ids,
    parse_next_tokens_reply,
    parse_text_reply,
    parse_yes_no,
)
from cowp_ros.llm.language_model import Choice, Example, Usage, YesNo
from cowp_ros.llm.settings import LLMSettings, Sampling
from cowp_ros.llm.transport import LANGUAGE_MODEL, ModelTransport

WARM_QUESTION = "Ready?"
"""The question `warm` ends its prefix with (its answer is not read)."""

SYSTEM_PROMPT = (
    "You are the commonsense reasoner of a household service robot. Use everyday "
    "knowledge of objects, their states and what they can be used for. When a question "
    "can be answered with yes or no, answer with one word: Yes or No. When asked to pick "
    "one of several options, answer with the name of exactly one option and nothing else."
)
"""Shared by every kind of question so the server's prompt cache keeps it evaluated."""

_TOP_LOGPROBS = 20


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
        self._transport = ModelTransport(settings, LANGUAGE_MODEL, max_retries=max_retries)
        self.base_url = self._transport.base_url
        """The server's URL as messages show it (a key in it hidden)."""
        self._name = settings.model
        self.usage = Usage()
        self._usage_lock = threading.Lock()
        self.prefix_cached_tokens = 0
        """Prompt tokens the server reused from its prompt cache (when it reports them)."""
        self.dropped_logprobs = 0
        """Replies whose log-probabilities were unusable (the text decided instead)."""
        self.warm_seconds = 0.0
        """Seconds `warm` took (not in `usage`, which counts questions)."""
        self.answers = CachedAnswers(
            open_cache(settings, cache),
            scope=lambda: settings.cache_scope or f"{self.base_url}|{self.name}",
            model_name=lambda: self.name,
            on_hit=self._count_cache_hit,
        )
        self.sampling: Sampling | None = None
        """Sampled answers (see `Sampling`); None: greedy, temperature 0 (the default)."""

    def set_sampling(self, sampling: Sampling | None) -> None:
        """Sample the answers from now on (None: greedy again)."""
        self.sampling = self.answers.sampling = sampling

    @property
    def cache(self) -> AnswerCache | None:
        """The answer cache this client reads and writes (None: it asks every time)."""
        return self.answers.cache

    # --- the LanguageModel protocol ------------------------------------------------

    @property
    def name(self) -> str:
        """The server's model id (asked from `/models` when the settings name none)."""
        if self._name is None:
            try:
                ids = parse_model_ids(self._transport.get("/models"))
            except ReplyError as err:
                raise self._transport.garbage(str(err)) from None
            if not ids:
                raise self._transport.garbage("its /models list is empty")
            self._name = self._transport.model = ids[0]
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
        hit = self.answers.get("yes_no", key)
        if hit is not None and _valid_yes_no(hit):
            return YesNo(hit["answer"], hit["p_yes"], hit["text"], cached=True)
        reply = self._chat(messages, max_tokens=1, logprobs=True)
        text = reply.text
        probability = p_yes(reply.top)
        # A sampled answer is the token the server drew, not the likelier one; P(yes)
        # stays the model's probability (a caller that thresholds it is not sampled).
        answer: bool | None = None
        if probability is not None and self.sampling is None:
            answer = probability >= 0.5
        else:
            answer = parse_yes_no(text)
        if answer is None:  # first token was e.g. "The": let it say a few words
            text = self._chat(messages, max_tokens=12, logprobs=False).text
            answer = parse_yes_no(text)
        result = YesNo(answer, probability, text)
        self.answers.put("yes_no", key, {"answer": answer, "p_yes": probability, "text": text})
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
        hit = self.answers.get("choice", key)
        if hit is not None and _valid_choice(hit, options):
            return Choice(hit["index"], hit["option"], hit["text"], cached=True)
        longest = max((len(option) for option in options), default=8)
        reply = self._chat(messages, max_tokens=min(48, 4 + longest // 2), logprobs=False)
        text = reply.text
        index = match_option(text, options)
        option = options[index] if index is not None else None
        self.answers.put("choice", key, {"index": index, "option": option, "text": text})
        return Choice(index, option, text)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        """Free text, greedy decoding (temperature 0) so the cache stays truthful, unless
        `sampling` asks for samples (then cached under their temperature and seed)."""
        messages = self._messages(prompt, system, examples)
        key = {"messages": messages, "max_tokens": max_tokens}
        text_hit = self.answers.get_text("complete", key, max_tokens)
        if text_hit is not None:
            return text_hit
        text = self._chat(messages, max_tokens=max_tokens, logprobs=False).text
        self.answers.put("complete", key, {"text": text})
        return text

    def continue_text(self, prompt: str, *, max_tokens: int = 64, stop: Sequence[str] = ()) -> str:
        """The model's own continuation of a raw text `prompt`, greedy, up to a `stop`.

        A plain completion (no chat template): what a method that has the model
        complete a document needs (LMZSP's next plan step, as the paper's completion
        models wrote it). Cached like every other answer.
        """
        key = {"prompt": prompt, "max_tokens": max_tokens, "stop": list(stop)}
        text_hit = self.answers.get_text("continue_text", key, max_tokens)
        if text_hit is not None:
            return text_hit
        payload: dict[str, Any] = {
            "model": self.name,
            "prompt": prompt,
            "max_tokens": max_tokens,
            **self._decoding(),
        }
        if stop:
            payload["stop"] = list(stop)
        reply = self._post(
            "/completions", payload, lambda body: parse_text_reply(body, max_tokens=max_tokens)
        )
        self.answers.put("continue_text", key, {"text": reply.text})
        return reply.text

    def next_tokens(self, prompt: str, *, top: int = 20) -> list[tuple[str, float]]:
        """The `top` most likely next tokens after a raw text `prompt`, with log-probs.

        A plain completion (no chat template), one output token: what SayCan-style
        scoring of a fixed set of skills needs (`cowp_ros.bench.skill_scoring` walks the
        skills' words with it). Cached like every other answer.
        """
        key = {"prompt": prompt, "top": top, "method": "completion-top-logprobs"}
        hit = self.answers.get("next_tokens", key)
        if hit is not None and isinstance(hit.get("top"), list):
            return [(str(token), float(lp)) for token, lp in hit["top"]]
        payload = {
            "model": self.name,
            "prompt": prompt,
            "max_tokens": 1,
            **self._decoding(),
            "logprobs": top,
        }
        reply = self._post("/completions", payload, parse_next_tokens_reply)
        found = [(alt.token, alt.logprob) for alt in reply.top[:top]]
        self.answers.put("next_tokens", key, {"top": [list(pair) for pair in found]})
        return found

    # --- batching helpers ----------------------------------------------------------

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

    def warm(
        self,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        question: str = WARM_QUESTION,
    ) -> float:
        """Have the server read the prefix of `system`, `examples` and `question` (the
        words the coming questions start with) now (llama.cpp reads only what a new
        prompt adds to its last one): seconds taken, 0.0 if it failed."""
        messages, started = self._messages(question, system, examples), time.monotonic()
        payload = {"model": self.name, "messages": messages, "max_tokens": 1, **self._decoding()}
        try:
            self._transport.post("/chat/completions", payload)  # nothing answered or cached
        except CowpError:
            return 0.0
        self.warm_seconds += (seconds := time.monotonic() - started)
        return seconds

    def close(self) -> None:
        """Release the HTTP connections (the object is unusable afterwards)."""
        self._transport.close()

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

    def _decoding(self) -> dict[str, Any]:
        """The request's decoding parameters: greedy, or sampled with a seed."""
        if self.sampling is None:
            return {"temperature": 0.0}
        return self.sampling.to_dict()

    def _count_cache_hit(self) -> None:
        with self._usage_lock:
            self.usage.cache_hits += 1

    def _chat(
        self, messages: list[dict[str, str]], *, max_tokens: int, logprobs: bool
    ) -> ChatReply:
        payload: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "max_tokens": max_tokens,
            **self._decoding(),
        }
        if logprobs:
            payload.update(logprobs=True, top_logprobs=_TOP_LOGPROBS)
        return self._post(
            "/chat/completions", payload, lambda body: parse_chat_reply(body, max_tokens=max_tokens)
        )

    def _post(self, path: str, payload: Any, parse: Callable[[bytes], ChatReply]) -> ChatReply:
        """One completion request: its reply validated by `parse`, its usage counted."""
        started = time.monotonic()
        body = self._transport.post(path, payload)
        try:
            reply = parse(body)
        except ReplyError as err:
            raise self._transport.garbage(str(err)) from None
        with self._usage_lock:  # ROS callbacks may ask from several threads
            self.usage.seconds += time.monotonic() - started
            self.usage.calls += 1
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            self.prefix_cached_tokens += reply.cached_tokens
            if reply.logprobs_note:
                self.dropped_logprobs += 1
        return reply


def _utf8(text: str) -> str:
    """Text every UTF-8 encoder takes (a lone surrogate from undecodable input -> '?')."""
    return text.encode("utf-8", errors="replace").decode("utf-8")


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
