"""The launch files translate the node spec and nothing else.

launch and launch_ros are not installable from PyPI, so these tests give the launch
files minimal stand-ins of the few classes they use (recording their arguments) and
check that each launch file yields exactly the spec's nodes, parameter files,
overrides and remappings: the part `cowp bringup` is tested on for real.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cowp_ros.bringup.spec import load_profile

LAUNCH_DIR = Path(__file__).resolve().parents[2] / "launch"


class Recorded:
    """Any launch class: remembers how it was built."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs


class LaunchConfiguration:
    values: ClassVar[dict[str, str]] = {}

    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, _context: Any) -> str:
        return self.values[self.name]


@pytest.fixture
def fake_launch(monkeypatch: pytest.MonkeyPatch) -> type[LaunchConfiguration]:
    modules = {
        "launch": {"LaunchDescription": Recorded},
        "launch.actions": {
            "DeclareLaunchArgument": Recorded,
            "OpaqueFunction": Recorded,
            "IncludeLaunchDescription": Recorded,
            "ExecuteProcess": Recorded,
            "SetEnvironmentVariable": Recorded,
        },
        "launch.substitutions": {"LaunchConfiguration": LaunchConfiguration},
        "launch.launch_description_sources": {"PythonLaunchDescriptionSource": Recorded},
        "launch_ros": {},
        "launch_ros.actions": {"Node": Recorded},
        "launch_ros.substitutions": {"FindPackageShare": Recorded},
    }
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        for attribute, value in attributes.items():
            setattr(module, attribute, value)
        monkeypatch.setitem(sys.modules, name, module)
    return LaunchConfiguration


def run_launch_file(name: str, arguments: dict[str, str]) -> tuple[list[Any], list[Any]]:
    """(declared arguments + extra actions, node actions) of a launch file."""
    spec = importlib.util.spec_from_file_location(name, LAUNCH_DIR / name)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    actions = description.args[0]
    opaque = [a for a in actions if "function" in a.kwargs]
    assert len(opaque) == 1
    defaults = {
        a.args[0]: a.kwargs["default_value"] for a in actions if "default_value" in a.kwargs
    }
    LaunchConfiguration.values = {**defaults, **arguments}
    nodes = opaque[0].kwargs["function"](None)
    return [a for a in actions if a is not opaque[0]], nodes


def assert_nodes_match_profile(nodes: list[Any], profile_name: str, overrides: dict) -> None:
    profile = load_profile(profile_name)
    own = [s for s in profile.nodes if not s.external]
    assert [n.kwargs["name"] for n in nodes] == [s.name for s in own]
    for node, spec in zip(nodes, own, strict=True):
        assert node.kwargs["package"] == spec.package
        assert node.kwargs["executable"] == spec.executable
        assert node.kwargs["remappings"] == list(spec.remappings)
        files = [str(p) for p in spec.parameter_files]
        assert node.kwargs["parameters"][: len(files)] == files
        expected = {**spec.parameters, **overrides.get(spec.name, {})}
        inline = node.kwargs["parameters"][len(files) :]
        assert (inline[0] if inline else {}) == expected


@pytest.mark.usefixtures("fake_launch")
@pytest.mark.parametrize("profile", ["sim", "replay", "robot", "gazebo"])
def test_generic_launch_file_starts_each_profiles_nodes(profile: str) -> None:
    _, nodes = run_launch_file("cowp.launch.py", {"profile": profile})
    assert_nodes_match_profile(nodes, profile, {})


@pytest.mark.usefixtures("fake_launch")
def test_overrides_argument_reaches_the_node_parameters() -> None:
    _, nodes = run_launch_file(
        "cowp.launch.py", {"overrides": "sim_world.scenario=other sim_world.rate_hz=5"}
    )
    assert_nodes_match_profile(nodes, "sim", {"sim_world": {"scenario": "other", "rate_hz": 5}})


@pytest.mark.usefixtures("fake_launch")
def test_robot_launch_file_defaults_to_the_robot_profile() -> None:
    declared, nodes = run_launch_file("robot.launch.py", {})
    assert_nodes_match_profile(nodes, "robot", {})
    assert {a.args[0] for a in declared if a.args} == {"profile", "overrides"}


@pytest.mark.usefixtures("fake_launch")
def test_gazebo_launch_file_adds_the_simulator_and_bridge() -> None:
    declared, nodes = run_launch_file("gazebo.launch.py", {})
    assert_nodes_match_profile(nodes, "gazebo", {})
    assert all(n.kwargs["parameters"][-1]["use_sim_time"] is True for n in nodes)
    include = next(a for a in declared if "launch_arguments" in a.kwargs)
    world = dict(include.kwargs["launch_arguments"])["gz_args"]
    assert world.startswith("-r ") and Path(world[3:]).is_file()
    bridge = next(a for a in declared if a.kwargs.get("package") == "ros_gz_bridge")
    assert Path(bridge.kwargs["parameters"][0]["config_file"]).is_file()
