"""A `LanguageModel` that answers from rules written in advance.

For tests (every branch of the loop needs a known answer) and for offline runs of the
CLI's plumbing. Rules are (regular expression, answer) pairs tried in order against the
question; the first that matches answers. Every question is logged, so a test can assert
what was asked, not only what was decided.
"""

from __future__ import annotations

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

    def questions(self, kind: str = "yes_no") -> list[str]:
        """The questions asked of one kind, in order."""
        return [q for k, q, _ in self.log if k == kind]
