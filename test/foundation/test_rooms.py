"""The rooms of the package import downward only, in the order the README's code map
states: a room may import the rooms listed after it, never one listed before it, and
rooms on one line do not import each other. Modules outside any room (errors, limits,
resources, safe_text) are the ground floor everyone may use."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cowp_ros

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(cowp_ros.__file__).resolve().parent


def stated_levels(readme: str) -> list[tuple[str, ...]]:
    """The rooms of the code map's block, one tuple per line, top first."""
    block = readme.split("## Code map", 1)[1].split("```", 2)[1]
    levels = []
    for line in block.splitlines():
        rooms = re.match(r"  ((?:[a-z_]+/ +)+)", line)  # the line's leading `name/`s
        if rooms:
            levels.append(tuple(re.findall(r"([a-z_]+)/", rooms.group(1))))
    return levels


def imports_by_room() -> dict[str, set[tuple[str, str]]]:
    """room -> {(imported room, where)} for every `cowp_ros.<room>` import in the package."""
    found: dict[str, set[tuple[str, str]]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) < 2:
            continue
        room = parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                pieces = module.split(".")
                if pieces[0] == "cowp_ros" and len(pieces) > 1 and pieces[1] != room:
                    where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    found.setdefault(room, set()).add((pieces[1], where))
    return found


def upward_imports(levels: list[tuple[str, ...]]) -> list[str]:
    level_of = {room: index for index, line in enumerate(levels) for room in line}
    wrong = []
    for room, imported in imports_by_room().items():
        for target, where in sorted(imported):
            if room in level_of and target in level_of and level_of[target] <= level_of[room]:
                wrong.append(f"{where}: {room}/ imports {target}/, which is not below it")
    return wrong


def test_the_readme_names_every_room_once() -> None:
    levels = stated_levels((ROOT / "README.md").read_text())
    named = [room for line in levels for room in line]
    rooms = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert sorted(named) == rooms and len(set(named)) == len(named)


def test_imports_only_point_down_the_code_map() -> None:
    levels = stated_levels((ROOT / "README.md").read_text())
    assert upward_imports(levels) == []


def test_an_upward_import_is_seen() -> None:
    """The check can fail: with the order reversed, the package's imports all point up."""
    levels = stated_levels((ROOT / "README.md").read_text())
    wrong = upward_imports(list(reversed(levels)))
    assert any("ros/ imports cowp/" in line for line in wrong)
    assert any("cli/ imports bench/" in line for line in wrong)
