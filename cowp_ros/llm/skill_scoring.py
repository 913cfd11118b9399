"""SayCan-style scoring: which of a fixed set of skills the model most likely says next.

SayCan (Ahn et al., 2022), and Inner Monologue on top of it, never parse free text: the
language model scores every skill in the robot's library as the continuation of the
prompt, log P(skill | prompt), and the robot does the best one that it can do. An
OpenAI-compatible server gives no log-probability of a given text (llama.cpp has no
`echo`), but it gives the top next tokens after any prompt (`next_tokens`), and a
skill's log-probability is the sum of its tokens' log-probabilities one after another.

So the skills are walked as a prefix tree, best first: a node is a prefix of some skill
with its log-probability; expanding it asks for the next tokens after prompt + prefix
and follows those that continue some skill. Log-probabilities only fall as a prefix
grows, so the first complete skill taken off the queue has the highest score of all:
the search is exact where the needed tokens are among the `top` returned, and it asks
only about prefixes that could still win (a handful of calls for a library of
hundreds). A skill whose next word was not among the top tokens is given the lowest
log-probability returned, halved in probability (it is below all of them): its branch
stays in the queue with that estimate and is expanded only if nothing likelier is left,
so an unlikely skill is still reachable, and its score is marked as not exact.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from cowp_ros.errors import CowpError

MAX_EXPANSIONS = 200
"""A guard: each expansion is one call to the model. Never reached on the benchmark."""


class NextTokenModel(Protocol):
    def next_tokens(self, prompt: str, *, top: int = 20) -> list[tuple[str, float]]: ...


@dataclass(frozen=True)
class Scored:
    """The chosen skill, its log-probability, and what the search cost."""

    index: int
    text: str
    logprob: float
    calls: int
    exact: bool
    """False when a token of it was outside the top list (its score is then a bound)."""


def best_skill(
    model: NextTokenModel,
    prompt: str,
    skills: Sequence[str],
    *,
    top: int = 20,
    max_expansions: int = MAX_EXPANSIONS,
) -> Scored:
    """The skill with the highest log P(skill | prompt) (see the module docstring).

    `skills` are the exact continuations scored, including any leading space and a
    closing mark (" find the cup.") so that a skill that is a prefix of another ("cup"
    and "cupboard") pays for the token that ends it.
    """
    if not skills:
        raise CowpError("no skill to score")
    ordered = list(dict.fromkeys(skills))
    # queue of (-logprob, tie-breaker, prefix, exact)
    queue: list[tuple[float, int, str, bool]] = [(0.0, 0, "", True)]
    expanded: dict[str, bool] = {}
    counter = 1
    calls = 0
    while queue:
        negative, _, prefix, exact = heapq.heappop(queue)
        if prefix in ordered:
            return Scored(skills.index(prefix), prefix, -negative, calls, exact)
        if prefix in expanded:
            continue
        expanded[prefix] = True
        if calls >= max_expansions:
            break
        tops = model.next_tokens(prompt + prefix, top=top)
        calls += 1
        floor = min((lp for _, lp in tops), default=-30.0)
        followed: set[str] = set()
        for token, lp in tops:
            extended = prefix + token
            if any(s.startswith(extended) for s in ordered):
                followed.add(extended)
                heapq.heappush(queue, (negative - lp, counter, extended, exact))
                counter += 1
        # Skills whose next piece was not offered: one optimistic step with the floor.
        # The step jumps to the skill's next word boundary, which is where tokenizers
        # split, and is refined by the next expansion like any other node.
        for skill in ordered:
            if not skill.startswith(prefix) or skill == prefix:
                continue
            rest = skill[len(prefix) :]
            cut = _next_piece(rest)
            extended = prefix + rest[:cut]
            if any(f.startswith(extended) or extended.startswith(f) for f in followed):
                continue
            if extended in expanded:
                continue
            heapq.heappush(queue, (negative - floor + math.log(2.0), counter, extended, False))
            counter += 1
            followed.add(extended)
    raise CowpError(
        f"scoring {len(ordered)} skills took more than {max_expansions} model calls",
        hint="score fewer skills at once",
    )


def _next_piece(rest: str) -> int:
    """Length of the next word piece of `rest`: a leading space, a word, or one mark."""
    index = 1 if rest[:1] == " " else 0
    if index < len(rest) and not rest[index].isalnum():
        return index + 1
    while index < len(rest) and rest[index].isalnum():
        index += 1
    return max(index, 1)
