"""What the COWP reasoning needs from a language model, independent of who serves it.

The monitor, acquirer, predicate generator, benchmark baselines and CLI talk to a
`LanguageModel`. The real implementation is an OpenAI-compatible client with a
persistent answer cache (`cowp_ros.llm.client`); unit tests use a scripted
double. Keeping the protocol this small keeps both honest: three kinds of question, and
a usage counter the benchmark reports (calls and tokens per method).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class YesNo:
    """A yes/no verdict.

    `answer` is None when the model said neither yes nor no (callers decide the
    documented fallback). `p_yes` is P(yes) / (P(yes) + P(no)) from first-token
    log-probabilities when the server returns them, else None.
    """

    answer: bool | None
    p_yes: float | None
    text: str
    cached: bool = False


@dataclass(frozen=True)
class Choice:
    """One option picked from a list; `index` None when the answer named none of them."""

    index: int | None
    option: str | None
    text: str
    cached: bool = False


@dataclass
class Usage:
    """Running totals; cache hits cost no call and no tokens."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    seconds: float = 0.0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cache_hits += other.cache_hits
        self.seconds += other.seconds


@dataclass(frozen=True)
class Example:
    """A worked few-shot example: the question and the answer we want imitated."""

    question: str
    answer: str


@runtime_checkable
class LanguageModel(Protocol):
    """The three kinds of question COWP asks, plus usage accounting."""

    @property
    def name(self) -> str:
        """The model's name as the server reports it (keys calibration and cache)."""
        ...

    @property
    def usage(self) -> Usage:
        """Running totals of calls, tokens and cache hits."""
        ...

    def ask_yes_no(
        self,
        question: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> YesNo:
        """Ask a question whose answer is yes or no."""
        ...

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        """Ask the model to pick one of `options` (listed in the prompt by the caller)."""
        ...

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        """Free text (e.g. the predicate generator); callers validate what comes back."""
        ...
