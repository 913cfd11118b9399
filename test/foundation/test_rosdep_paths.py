"""docs/robot.md's `rosdep install`, with package discovery done as rosdep does it.

rosdep's `--from-paths P` finds packages with catkin_pkg's `find_packages(P)` (the real
library, PyPI catkin-pkg), which stops descending at the first package.xml it meets.
The repository root is itself a package (cowp_ros), so `--from-paths src` never sees
`cowp_interfaces` inside it; with `--ignore-src`, a dependency found in no from-path is
looked up as a rosdep key, and `cowp_interfaces` has none ("Cannot locate rosdep
definition"). The workspace here is laid out as the documented `git clone`s make it: this
checkout as src/cowp_ros, the Hand-E packages with the manifests
docs/kilted_interfaces.md records (their sources cannot be fetched here).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
from pathlib import Path

import pytest
from catkin_pkg.packages import find_packages

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "robot.md"
FACTS = importlib.util.spec_from_file_location(
    "kilted_facts", ROOT / "test" / "skills" / "kilted_facts.py"
)
assert FACTS and FACTS.loader
kilted_facts = importlib.util.module_from_spec(FACTS)
FACTS.loader.exec_module(kilted_facts)

MANIFEST = """<?xml version="1.0"?>
<package format="3">
  <name>{name}</name><version>0.0.0</version><description>stand-in</description>
  <maintainer email="maintainer@example.org">m</maintainer><license>Apache-2.0</license>
  {depends}
</package>
"""


def documented_command(tool: str) -> list[str]:
    """The documented command line of `tool` (continuation lines joined, comment cut)."""
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(), flags=re.S)
    text = "\n".join(blocks).replace("\\\n", " ")
    (line,) = [ln for ln in text.splitlines() if ln.strip().startswith(f"{tool} ")]
    return shlex.split(line.split(" #")[0])


def option_values(argv: list[str], option: str) -> list[str]:
    """The values after `option`, up to the next option (rosdep's nargs='+')."""
    if option not in argv:
        return []
    values = []
    for arg in argv[argv.index(option) + 1 :]:
        if arg.startswith("-"):
            break
        values.append(arg)
    return values


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """~/cowp_ws as step 1's `git clone`s make it."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "cowp_ros").symlink_to(ROOT, target_is_directory=True)
    driver = src / "robotiq_hande_driver" / "robotiq_hande_driver"
    driver.mkdir(parents=True)
    depends = "".join(
        f"<depend>{d}</depend>" for d in kilted_facts.fact("hande.driver_depends").values
    )
    (driver / "package.xml").write_text(
        MANIFEST.format(name="robotiq_hande_driver", depends=depends)
    )
    description = src / "robotiq_hande_description"
    description.mkdir()
    (description / "package.xml").write_text(
        MANIFEST.format(name="robotiq_hande_description", depends="")
    )
    return tmp_path


def rosdep_keys(workspace: Path, from_paths: list[str], skip_keys: list[str]) -> set[str]:
    """The keys `rosdep install --from-paths ... --ignore-src --skip-keys ...` resolves:
    every dependency of the packages found, less those found in the paths."""
    packages = {}
    for path in from_paths:
        assert (workspace / path).is_dir(), f"--from-paths {path}: no such folder"
        packages.update({p.name: p for p in find_packages(str(workspace / path)).values()})
    keys = set()
    for package in packages.values():
        package.evaluate_conditions(os.environ)
        for dep in (
            package.build_depends
            + package.buildtool_depends
            + package.build_export_depends
            + package.exec_depends
            + package.test_depends
        ):
            if dep.evaluated_condition is not False:
                keys.add(dep.name)
    return keys - set(packages) - set(skip_keys)


def test_the_documented_rosdep_finds_every_package_of_the_workspace(workspace: Path) -> None:
    argv = documented_command("rosdep")
    assert argv[:2] == ["rosdep", "install"]
    assert "--ignore-src" in argv
    keys = rosdep_keys(
        workspace, option_values(argv, "--from-paths"), option_values(argv, "--skip-keys")
    )
    assert keys, "no dependency at all: the packages were not found"
    assert {"rclpy", "control_msgs", "hardware_interface"} <= keys
    ours = {"cowp_ros", "cowp_interfaces", "robotiq_hande_driver", "robotiq_hande_description"}
    assert keys & ours == set(), "a workspace package would be looked up as a rosdep key"


def test_the_documented_rosdep_skips_the_keys_kilted_lacks(workspace: Path) -> None:
    argv = documented_command("rosdep")
    keys = rosdep_keys(
        workspace, option_values(argv, "--from-paths"), option_values(argv, "--skip-keys")
    )
    lacking = set(kilted_facts.fact("hande.keys_kilted_lacks").values)
    assert keys & lacking == set()


def test_discovery_stops_at_the_repository_root_as_rosdep_sees_it(workspace: Path) -> None:
    """The defect the documented command avoids: `--from-paths src` finds cowp_ros only,
    so cowp_interfaces is left as a key without a rosdep definition."""
    found = {p.name for p in find_packages(str(workspace / "src")).values()}
    assert "cowp_ros" in found and "cowp_interfaces" not in found
    assert "cowp_interfaces" in rosdep_keys(workspace, ["src"], [])


def test_the_documented_colcon_build_names_the_same_packages(workspace: Path) -> None:
    """colcon, like catkin_pkg, does not look inside a package: the build names both of
    this repository's package folders, and every folder rosdep was given."""
    colcon = documented_command("colcon")
    rosdep = documented_command("rosdep")
    base_paths = option_values(colcon, "--base-paths")
    assert set(option_values(rosdep, "--from-paths")) == set(base_paths)
    assert {"src/cowp_ros", "src/cowp_ros/cowp_interfaces"} <= set(base_paths)
    clones = re.findall(r"git clone (\S+)(?: (\S+))?", DOC.read_text())
    cloned = {f"src/{target or Path(url).stem}" for url, target in clones}
    assert {p for p in base_paths if p.count("/") == 1} <= cloned
