"""The loop's ports and the values they answer in sit below every method: a method can
be added, changed or removed without `ports.py` or `answers.py` moving."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "cowp_ros" / "cowp"

# The modules of a method: the paper's reasoners and the grounded method's.
METHOD_MODULES = {
    "cowp_ros.cowp.monitor",
    "cowp_ros.cowp.predicates",
    "cowp_ros.cowp.acquirer",
    "cowp_ros.cowp.prompts",
    "cowp_ros.cowp.calibration",
    "cowp_ros.cowp.grounded",
    "cowp_ros.cowp.grounding",
    "cowp_ros.cowp.situation_monitor",
    "cowp_ros.cowp.frugal_acquirer",
}


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_ports_and_their_values_import_no_method() -> None:
    for name in ("ports.py", "answers.py"):
        reached = {
            module
            for module in imported(CORE / name)
            if any(module == m or module.startswith(m + ".") for m in METHOD_MODULES)
        }
        assert not reached, f"{name} imports {sorted(reached)}"
