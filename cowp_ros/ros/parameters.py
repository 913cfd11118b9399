"""Node parameters declared from one table per node, checked at start-up.

Each node module has `PARAMETERS`, a tuple of `Param`: name, default, description and
an optional check. `declare_parameters` declares them all, reads the values, and ends
the node's start with one clear error when a value is of the wrong type or out of
range. The defaults are the ones `config/<node>.yaml` shows (a test keeps the two in
step), so the table is the node's whole surface on one screen. They are read-only:
each is read once, at start-up, so a peer's `SetParameters` is refused with a reason
rather than changing what other nodes read while the node goes on with the old value.

Values are forgiving the way YAML and `--set` users expect: `timeout_s: 5` means 5.0 for
a float parameter (rclpy alone refuses an integer where it declared a double), and an
unquoted `off` for a string parameter arrives as "false" (YAML reads it as a boolean).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from cowp_ros.errors import CowpError

Check = Callable[[Any], str | None]
"""A check returns None for a good value, else what is wrong with it ("must be > 0")."""


@dataclass(frozen=True)
class Param:
    """One parameter of a node."""

    name: str
    default: Any
    description: str
    check: Check | None = None


def positive(value: Any) -> str | None:
    return None if math.isfinite(value) and value > 0 else "must be a finite number > 0"


def at_least(low: float) -> Check:
    def check(value: Any) -> str | None:
        return None if math.isfinite(value) and value >= low else f"must be >= {low:g}"

    return check


def between(low: float, high: float) -> Check:
    def check(value: Any) -> str | None:
        ok = math.isfinite(value) and low <= value <= high
        return None if ok else f"must be between {low:g} and {high:g}"

    return check


def one_of(*allowed: str) -> Check:
    def check(value: Any) -> str | None:
        return None if value in allowed else f"must be one of: {', '.join(allowed)}"

    return check


def declare_parameters(node: Node, table: Sequence[Param]) -> dict[str, Any]:
    """Declare every parameter of `table` on `node`; return the checked values by name."""
    values: dict[str, Any] = {}
    for param in table:
        # read-only: a node reads its parameters once, at start-up, and another node may
        # read them to check it (the task manager reads the commonsense node's `method`);
        # a peer's SetParameters would change what others see, not what the node does
        descriptor = ParameterDescriptor(
            description=param.description, dynamic_typing=True, read_only=True
        )
        node.declare_parameter(param.name, param.default, descriptor)
        values[param.name] = _typed(param, node.get_parameter(param.name).value)
    return values


def _typed(param: Param, value: Any) -> Any:
    """`value` in the type of the default, checked; a CowpError naming the parameter."""
    default = param.default
    expected = _type_name(default)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, str):
        if isinstance(value, bool):  # YAML reads an unquoted off/no/false as a boolean
            value = "true" if value else "false"
        ok = isinstance(value, str)
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        value = list(value) if ok else value
    else:  # pragma: no cover - a table entry of a type ROS parameters cannot hold
        raise TypeError(f"parameter {param.name}: unsupported default {default!r}")
    if not ok:
        raise CowpError(
            f"parameter {param.name}: expected {expected}, got {value!r}",
            hint=f"{param.description} (default {default!r})",
        )
    if param.check is not None:
        problem = param.check(value)
        if problem:
            raise CowpError(f"parameter {param.name} {problem}, not {value!r}")
    return value


def _type_name(default: Any) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, float):
        return "a number"
    if isinstance(default, int):
        return "a whole number"
    if isinstance(default, str):
        return "a string"
    return "a list of strings"
