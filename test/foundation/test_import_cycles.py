"""No two modules import each other, directly or through others: a circle of imports is
one idea spread over several files, and none of them can be read (or tested) alone.

Every import of a `cowp_ros` module counts, also one inside a function or under
TYPE_CHECKING: a lazy import dodges Python's import order, not the circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cowp_ros

PACKAGE = Path(cowp_ros.__file__).resolve().parent


def module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports (a package's `__init__` only where
    the import names the package itself)."""
    files = {module_name(path, package): path for path in package.rglob("*.py")}

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                found = known(target) if target.startswith("cowp_ros.") else None
                # a module's own package runs first anyway: not an edge
                if found and found != name and not name.startswith(f"{found}."):
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[tuple[str, ...]] = set()
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.add(tuple(sorted(group)))
    return found


def test_no_two_modules_import_each_other() -> None:
    assert sorted(circles(import_graph())) == []


def test_a_circle_is_seen_through_a_third_module_and_under_type_checking(
    tmp_path: Path,
) -> None:
    package = tmp_path / "cowp_ros"
    (package / "skills").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "skills" / "__init__.py").write_text("")
    (package / "skills" / "a.py").write_text("from cowp_ros.skills import b\n")
    (package / "skills" / "b.py").write_text("from .c import thing\n")
    (package / "skills" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cowp_ros.skills.a import x\n"
    )
    (package / "skills" / "d.py").write_text("import cowp_ros.skills.a\n")
    graph = import_graph(package)
    assert graph["cowp_ros.skills.d"] == {"cowp_ros.skills.a"}
    assert circles(graph) == {("cowp_ros.skills.a", "cowp_ros.skills.b", "cowp_ros.skills.c")}
