"""docs/kilted_interfaces.md read as data, and test doubles built from its message facts.

The upstream message and action definitions the robot backends use are written down
once, as facts with their sources, in docs/kilted_interfaces.md. The doubles here are
made from those facts: a message double has exactly the upstream fields (setting any
other raises AttributeError), fields of an installable type (sensor_msgs/JointState,
trajectory_msgs/JointTrajectory) are the real messages. So a backend that fills in a
field the Kilted interface does not have fails its test, as it would fail on the robot.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FACTS_FILE = ROOT / "docs" / "kilted_interfaces.md"

_ROW = re.compile(r"^\|\s*`(?P<key>[^`]+)`\s*\|(?P<value>.*)\|(?P<source>[^|]*)\|\s*$")
_SOURCE = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+) @ (?P<branch>[\w./-]+): (?P<file>\S.*)$")


class Fact:
    def __init__(self, key: str, values: list[str], source: str) -> None:
        self.key, self.values, self.source = key, values, source

    @property
    def value(self) -> str:
        (only,) = self.values
        return only

    def source_parts(self) -> dict[str, str] | None:
        match = _SOURCE.match(self.source)
        return match.groupdict() if match else None


@cache
def facts() -> dict[str, Fact]:
    """Every fact row of docs/kilted_interfaces.md, by key."""
    found: dict[str, Fact] = {}
    for line in FACTS_FILE.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        values = re.findall(r"`([^`]*)`", match["value"])
        key = match["key"]
        assert key not in found, f"fact {key} is listed twice"
        found[key] = Fact(key, values, match["source"].strip())
    return found


def fact(key: str) -> Fact:
    return facts()[key]


def fields(key: str) -> dict[str, str]:
    """A fact listing `name: type` fields, as {name: type}."""
    pairs = [v.split(":", 1) for v in fact(key).values]
    return {name.strip(): kind.strip() for name, kind in pairs}


# --- message doubles --------------------------------------------------------------

_PRIMITIVE_DEFAULTS = {"bool": False, "string": ""}
_UNSET = object()
# Nested upstream messages that are not installable here: their fields are facts too.
_NESTED = {"control_msgs/GripperCommand": "GripperCommand.command"}


def _default(kind: str) -> Any:
    if kind.endswith("[]"):
        return []
    if kind in _PRIMITIVE_DEFAULTS:
        return _PRIMITIVE_DEFAULTS[kind]
    if re.fullmatch(r"(u?int|float)\d+", kind):
        return 0.0 if kind.startswith("float") else 0
    if kind in _NESTED:
        return message_class(kind, fields(_NESTED[kind]))()
    package, name = kind.split("/")
    try:
        return getattr(importlib.import_module(f"{package}.msg"), name)()
    except ImportError:  # not installable here and not listed: an empty stand-in
        return SimpleNamespace()


def message_class(name: str, field_types: dict[str, str]) -> type:
    """A message double with exactly these fields (and their upstream defaults)."""

    def init(self: Any, **values: Any) -> None:
        for field_name, kind in field_types.items():
            given = values.pop(field_name, _UNSET)
            setattr(self, field_name, _default(kind) if given is _UNSET else given)
        if values:
            raise AttributeError(f"{name} has no field(s) {', '.join(values)}")

    def describe(self: Any) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in field_types)
        return f"{name}({inner})"

    return type(
        name.replace("/", "_"),
        (),
        {"__slots__": tuple(field_types), "__init__": init, "__repr__": describe},
    )


def action_type(name: str) -> SimpleNamespace:
    """Goal/Result/Feedback doubles of an upstream action listed as NAME.goal etc."""
    parts = {}
    for part in ("goal", "result", "feedback"):
        key = f"{name}.{part}"
        if key in facts():
            parts[part.capitalize()] = message_class(f"{name}_{part}", fields(key))
    return SimpleNamespace(**parts)
