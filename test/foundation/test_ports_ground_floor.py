"""The loop's ports and the values they answer in sit on the ground floor of the loop's
package: a method can be added, changed or removed without `ports.py` or `answers.py`
moving (the room order keeps every method above the loop; this keeps the two files
below the rest of the loop too)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "cowp_ros" / "cowp"

GROUND_FLOOR = {
    "cowp_ros.cowp.answers",
    "cowp_ros.cowp.cancel",
    "cowp_ros.cowp.report",
    "cowp_ros.cowp.situation",
}
"""What ports.py and answers.py may import of the loop's package."""


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_ports_and_their_values_import_only_the_ground_floor() -> None:
    for name in ("ports.py", "answers.py"):
        above = {
            module
            for module in imported(CORE / name)
            if module.startswith("cowp_ros.cowp") and module not in GROUND_FLOOR
        }
        assert not above, f"{name} imports {sorted(above)}"
        assert not any(m.startswith("cowp_ros.methods") for m in imported(CORE / name))


def test_the_implementations_ports_py_names_exist() -> None:
    """ports.py's docstring says where each port is implemented; every dotted name it
    gives (from `cowp_ros.`, or within it) must still be a class there: a class that
    moved fails here until the docstring follows it."""
    import importlib
    import re

    import cowp_ros.cowp.ports as ports

    pattern = r"`((?:[a-z_]+\.)+[A-Z][A-Za-z]+)`"
    named = [d for d in re.findall(pattern, ports.__doc__ or "") if d.count(".") >= 2]
    assert len(named) >= 8
    for dotted in named:
        module, _, name = dotted.rpartition(".")
        found = None
        for candidate in (module, f"cowp_ros.{module}"):
            try:
                found = getattr(importlib.import_module(candidate), name, None)
            except ImportError:
                continue
            if found is not None:
                break
        assert isinstance(found, type), f"ports.py names {dotted}, which is not there"
