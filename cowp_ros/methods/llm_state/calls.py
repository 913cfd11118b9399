"""The whitelist LLM-State's function calls must pass: parsed as data, never executed.

The model answers with a JSON list of calls, e.g.

    [{"name": "set_attribute",
      "arguments": {"object": "cup_1", "attribute": "cleanliness", "value": "dirty"}}]

(the OpenAI `tool_calls` shape, `{"function": {"name": ..., "arguments": "<json>"}}`, is
read too). Each call is checked against `FUNCTIONS`: a known name, exactly the declared
arguments, each a string of its kind. Identifiers go through `check_identifier` (so no
PDDL syntax, path, code or keyword can become a name); free text is short, single-line
and free of PDDL syntax. Anything else is refused with the reason, and the refusal goes
into the report: a hostile or confused reply changes nothing and is visible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cowp_ros.pddl.identifiers import UnsafeIdentifierError, check_identifier, has_pddl_syntax

MAX_REPLY_CHARS = 8000
MAX_CALLS = 16
MAX_VALUE_CHARS = 60
MAX_SUMMARY_CHARS = 200

PHRASE = re.compile(r"[a-z0-9][a-z0-9 _-]*")
SENTENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ,.'_-]*")

FUNCTIONS: dict[str, dict[str, str]] = {
    "add_object": {"name": "identifier", "kind": "identifier"},
    "remove_object": {"name": "identifier"},
    "set_attribute": {"object": "identifier", "attribute": "identifier", "value": "phrase"},
    "clear_attribute": {"object": "identifier", "attribute": "identifier"},
    "note_failure": {"summary": "sentence"},
}
"""Function name -> argument name -> kind (identifier, phrase, sentence)."""


@dataclass(frozen=True)
class ToolCall:
    """A call that passed the whitelist: a known function with validated arguments."""

    name: str
    arguments: Mapping[str, str]

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


@dataclass(frozen=True)
class RejectedCall:
    """What was refused (shortened for the report) and why."""

    shown: str
    reason: str

    def __str__(self) -> str:
        return f"{self.shown}: {self.reason}"


@dataclass(frozen=True)
class ParsedCalls:
    accepted: tuple[ToolCall, ...]
    rejected: tuple[RejectedCall, ...]


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)[:200]
    return text if len(text) <= 80 else text[:77] + "..."


def _json_part(text: str) -> str:
    """The JSON inside a reply that may wrap it in a code fence or a sentence."""
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        return ""
    start = min(starts)
    end = text.rfind("]" if text[start] == "[" else "}")
    return text[start : end + 1] if end > start else ""


def parse_tool_calls(reply: str) -> ParsedCalls:
    """Accept the whitelisted calls in a model reply; refuse the rest with reasons."""
    if len(reply) > MAX_REPLY_CHARS:
        return ParsedCalls(
            (), (RejectedCall(_shown(reply), f"reply longer than {MAX_REPLY_CHARS} characters"),)
        )
    stripped = reply.strip()
    if stripped in ("", "[]"):
        return ParsedCalls((), ())
    try:
        data = json.loads(_json_part(stripped))
    except (json.JSONDecodeError, RecursionError):
        return ParsedCalls((), (RejectedCall(_shown(stripped), "not a JSON list of calls"),))
    if isinstance(data, dict):
        data = data.get("calls", data.get("tool_calls", [data]))
    if not isinstance(data, list):
        return ParsedCalls((), (RejectedCall(_shown(data), "not a JSON list of calls"),))
    accepted: list[ToolCall] = []
    rejected: list[RejectedCall] = []
    for index, item in enumerate(data):
        if index >= MAX_CALLS:
            rejected.append(RejectedCall(_shown(item), f"more than {MAX_CALLS} calls in one reply"))
            continue
        try:
            accepted.append(check_call(item))
        except ValueError as err:
            rejected.append(RejectedCall(_shown(item), str(err)))
    return ParsedCalls(tuple(accepted), tuple(rejected))


def check_call(item: Any) -> ToolCall:
    """One call as data -> a `ToolCall`, or ValueError saying why not."""
    if not isinstance(item, dict):
        raise ValueError("a call must be an object with a name and arguments")
    if isinstance(item.get("function"), dict):  # OpenAI tool_calls shape
        item = item["function"]
    name = item.get("name")
    arguments = item.get("arguments", {})
    if isinstance(arguments, str):
        if len(arguments) > MAX_REPLY_CHARS:
            raise ValueError("arguments too long")
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            raise ValueError("arguments are not a JSON object") from None
    if not isinstance(name, str) or name not in FUNCTIONS:
        allowed = ", ".join(FUNCTIONS)
        raise ValueError(f"unknown function {_shown(name)!r} (allowed: {allowed})")
    if not isinstance(arguments, dict):
        raise ValueError(f"{name}: arguments must be an object")
    declared = FUNCTIONS[name]
    missing = sorted(set(declared) - set(arguments))
    extra = sorted(set(arguments) - set(declared))
    if missing or extra:
        raise ValueError(
            f"{name} takes {', '.join(declared)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unexpected {', '.join(_shown(e) for e in extra)}" if extra else "")
        )
    checked = {key: _check_value(name, key, kind, arguments[key]) for key, kind in declared.items()}
    return ToolCall(name, checked)


def _check_value(function: str, key: str, kind: str, value: Any) -> str:
    where = f"{function}.{key}"
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, not {type(value).__name__}")
    if kind == "identifier":
        try:
            return check_identifier(value, where)
        except UnsafeIdentifierError as err:
            raise ValueError(err.message) from None
    limit = MAX_VALUE_CHARS if kind == "phrase" else MAX_SUMMARY_CHARS
    text = " ".join(value.split())
    if kind == "phrase":
        text = text.lower()
    if len(text) > limit:
        raise ValueError(f"{where} is longer than {limit} characters")
    if has_pddl_syntax(text):
        raise ValueError(f"{where} contains PDDL syntax")
    pattern = PHRASE if kind == "phrase" else SENTENCE
    if not pattern.fullmatch(text):
        raise ValueError(f"{where} may only hold letters, digits, spaces and - _ , . '")
    return text


__all__ = [
    "FUNCTIONS",
    "ParsedCalls",
    "RejectedCall",
    "ToolCall",
    "check_call",
    "parse_tool_calls",
]
