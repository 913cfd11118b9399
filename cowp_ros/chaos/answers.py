"""A responder that answers like a sensible model, by rules over the question.

The scripted server (`server.py`) needs something to say when a run is not about what
the model says: the harness's faults replace some answers and leave the rest to this,
and the smoke runs of the bench scripts use it as their model. It reads the request as
the client sends it: one-token requests with `logprobs` are yes/no questions (answered
with first-token log-probabilities, P(yes) = `confidence`), other requests get text.

    SensibleModel(no=[r"find the can, if the can is broken"])

says "No" to yes/no questions matching any `no` pattern and "Yes" to the others, but
for a question whether what a sentence says makes something dirty ("Task: serving
water. The cup has mould in it. Is the cup dirty?"), which it answers by the
sentence's words; free-text questions get the first matching `texts` rule or `default_text`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer, completion, yes_no_logprobs

DIRT_QUESTION = re.compile(r"^(?:Task: [^.]*\. )?(?P<told>.+)\. Is .+ dirty\?$", re.DOTALL)
"""A question whether a sentence makes an object dirty, after the task's words if any."""
PLAIN_QUESTION = re.compile(r"Q: (?P<question>[^\n]*)\nA:$")
"""The last question of a plain-text few-shot prompt."""
DIRTY_WORDS = re.compile(
    r"\b(dirty|filthy|stain(s|ed)?|mud(dy)?|mou?ld(y)?|grease|greasy|sticky|grime|crumbs)\b",
    re.IGNORECASE,
)


@dataclass
class SensibleModel:
    """A `Responder` with rule-based answers (see the module docstring)."""

    no: Sequence[str] = ()
    texts: Sequence[tuple[str, str]] = ()
    default_text: str = "none of them"
    confidence: float = 0.95
    model: str = "scripted"
    asked: list[str] = field(default_factory=list)

    def verdict(self, question: str) -> bool:
        """The yes/no answer to `question`."""
        if any(re.search(pattern, question, re.IGNORECASE) for pattern in self.no):
            return False
        told = DIRT_QUESTION.match(question.strip())
        return bool(DIRTY_WORDS.search(told["told"])) if told else True

    def text(self, question: str) -> str:
        """The free-text answer to `question`."""
        for pattern, answer in self.texts:
            if re.search(pattern, question, re.IGNORECASE):
                return answer
        return self.default_text

    def __call__(self, request: Request) -> Reply | None:
        plain = PLAIN_QUESTION.search(str((request.json or {}).get("prompt", "")))
        if plain is not None and request.wants_logprobs and request.route.endswith("/completions"):
            # A plain-text prompt ("Q: ...\nA:"), answered in the same layout as a chat one.
            yes = self.verdict(plain["question"])
            self.asked.append(plain["question"])
            top = yes_no_logprobs(self.confidence if yes else 1.0 - self.confidence)
            body = completion(top[0][0], top, model=self.model)
            body["choices"][0]["text"] = top[0][0]
            return Reply(body=body)
        if not request.is_chat:
            return None
        question = request.last_user_text
        self.asked.append(question)
        if request.wants_logprobs:
            yes = self.verdict(question)
            p_yes = self.confidence if yes else 1.0 - self.confidence
            top = yes_no_logprobs(p_yes)
            return Reply(body=completion(top[0][0], top, model=self.model))
        if request.max_tokens <= 12 and question.rstrip().endswith("?"):
            # the client's follow-up to a yes/no question whose first token was neither
            return Reply(body=completion("Yes." if self.verdict(question) else "No."))
        return Reply(body=completion(self.text(question), model=self.model))


SMOKE_HELP = "a tiny run against the scripted model server (for CI; its figures mean nothing)"
"""The --smoke help of the bench scripts: each runs in CI in a tiny configuration, with
this module's server standing in for the language model, so that none can rot."""


def answer_smoke_runs(args: argparse.Namespace, stack: contextlib.ExitStack) -> None:
    """Point a bench script's language-model arguments (`add_llm_arguments`) at a scripted
    server for the length of `stack`, never cached: what `--smoke` asks of every script."""
    args.llm_url = stack.enter_context(sensible_model_server())
    args.llm_model, args.no_cache = "scripted", True


@contextlib.contextmanager
def sensible_model_server() -> Iterator[str]:
    """A scripted server with `SensibleModel` answers, with OPENAI_BASE_URL and
    OPENAI_MODEL pointing at it for the duration (the bench scripts' --smoke model)."""
    keys = ("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY")
    saved = {key: os.environ.get(key) for key in keys}
    with ScriptedLLMServer(SensibleModel()) as server:
        os.environ.update(OPENAI_BASE_URL=server.url, OPENAI_MODEL="scripted")
        os.environ.pop("OPENAI_API_KEY", None)
        try:
            yield server.url
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
