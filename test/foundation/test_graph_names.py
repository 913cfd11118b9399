"""The graph's names are spelled once (`cowp_ros/ros/names.py`): every topic, service or
action name that a launch file or a config file writes out is one of them, so renaming
one there cannot leave a file behind."""

from __future__ import annotations

import re
from pathlib import Path

from cowp_ros.ros import names

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"""["'\s:=](/(?:cowp|wrist_camera)/[A-Za-z0-9_/]+)""")


def declared() -> set[str]:
    return {v for k, v in vars(names).items() if k.isupper() and isinstance(v, str)}


def written_out() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for folder in ("launch", "config"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".yaml", ".yml", ".xml") and path.is_file():
                for name in NAME.findall(path.read_text()):
                    found.setdefault(name.rstrip("/"), set()).add(str(path.relative_to(ROOT)))
    return found


def test_launch_and_config_files_name_only_declared_graph_names() -> None:
    found = written_out()
    assert found, "the files name no graph topic at all: the pattern is stale"
    unknown = {name: files for name, files in found.items() if name not in declared()}
    assert not unknown, f"names not in cowp_ros/ros/names.py: {unknown}"


def test_the_pattern_catches_a_misspelled_name() -> None:
    assert NAME.findall("image_topic: /wrist_camera/image_rawx\n") == ["/wrist_camera/image_rawx"]
    assert "/wrist_camera/image_rawx" not in declared()
