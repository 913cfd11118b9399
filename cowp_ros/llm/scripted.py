"""A `LanguageModel` that answers from rules written in advance.

For tests (every branch of the loop needs a known answer) and for offline runs of the
CLI's plumbing. Rules are (regular expression, answer) pairs tried in order against the
question; the first that matches answers. Every question is logged, so a test can assert
what was asked, not only what was decided.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from cowp_ros.llm.language_model import Choice, Example, Usage, YesNo

Rule = tuple[str, object]


@dataclass
class ScriptedModel:
    """Answers yes/no, choice and free-text questions from ordered regex rules.

    `yes_no` answers are True, False, None (neither) or a float (P(yes), with the text
    then neither yes nor no). `choices` answers name an option (matched by text); an
    unmatched choice question takes `default_choice` (an index, or None for "none").
    """

    yes_no: Sequence[Rule] = ()
    choices: Sequence[Rule] = ()
    completions: Sequence[Rule] = ()
    continuations: Sequence[Rule] = ()
    """For `next_tokens`: (pattern on the prompt, the continuation the model prefers)."""
    default_yes_no: bool | None = True
    default_choice: int | None = 0
    name: str = "scripted"
    usage: Usage = field(default_factory=Usage)
    log: list[tuple[str, str, str]] = field(default_factory=list)

    def _match(self, rules: Sequence[Rule], question: str) -> tuple[bool, object]:
        for pattern, answer in rules:
            if re.search(pattern, question, flags=re.IGNORECASE):
                return True, answer
        return False, None

    def _count(self) -> None:
        self.usage.calls += 1

    def ask_yes_no(
        self, question: str, *, system: str | None = None, examples: Sequence[Example] = ()
    ) -> YesNo:
        self._count()
        matched, answer = self._match(self.yes_no, question)
        if not matched:
            answer = self.default_yes_no
        if isinstance(answer, float):
            result = YesNo(None, answer, "maybe")
        elif answer is None:
            result = YesNo(None, None, "I am not sure")
        else:
            result = YesNo(bool(answer), 1.0 if answer else 0.0, "Yes" if answer else "No")
        self.log.append(("yes_no", question, result.text))
        return result

    def ask_choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
    ) -> Choice:
        self._count()
        matched, answer = self._match(self.choices, question)
        index: int | None
        if matched:
            index = options.index(str(answer)) if answer in options else None
        else:
            index = self.default_choice if self.default_choice is not None else None
        if index is not None and not 0 <= index < len(options):
            index = None
        text = options[index] if index is not None else "none of them"
        self.log.append(("choice", question, text))
        return Choice(index, options[index] if index is not None else None, text)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        examples: Sequence[Example] = (),
        max_tokens: int = 64,
    ) -> str:
        self._count()
        matched, answer = self._match(self.completions, prompt)
        text = str(answer) if matched else ""
        self.log.append(("complete", prompt, text))
        return text

    def continue_text(self, prompt: str, *, max_tokens: int = 64, stop: Sequence[str] = ()) -> str:
        """The first `completions` rule matching the prompt ("" with none), cut at a stop."""
        self._count()
        matched, answer = self._match(self.completions, prompt)
        text = str(answer) if matched else ""
        cuts = [text.find(s) for s in stop if s and s in text]
        text = text[: min(cuts)] if cuts else text
        self.log.append(("continue_text", prompt, text))
        return text

    def next_tokens(self, prompt: str, *, top: int = 20) -> list[tuple[str, float]]:
        """The next word piece of the preferred continuation (log P = log 0.9), and a
        token that continues nothing (log 0.1).

        A rule applies when its pattern matches the prompt without the part of its
        continuation already written at the prompt's end; with none, the model prefers
        nothing ("?" only). Each call counts as a model call.
        """
        self._count()
        for pattern, answer in self.continuations:
            text = str(answer)
            done = next((k for k in range(len(text), -1, -1) if prompt.endswith(text[:k])), 0)
            if re.search(pattern, prompt[: len(prompt) - done], flags=re.IGNORECASE):
                rest = text[done:]
                if not rest:
                    break
                piece = re.match(r" ?[A-Za-z0-9]+|.", rest, flags=re.DOTALL)
                assert piece is not None
                self.log.append(("next_tokens", prompt, piece.group(0)))
                return [(piece.group(0), math.log(0.9)), ("\u2047", math.log(0.1))][:top]
        self.log.append(("next_tokens", prompt, "?"))
        return [("\u2047", 0.0)]

    def questions(self, kind: str = "yes_no") -> list[str]:
        """The questions asked of one kind, in order."""
        return [q for k, q, _ in self.log if k == kind]
