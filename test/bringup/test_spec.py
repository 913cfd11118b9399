"""The node specification resolves the same way for bring-up and the launch files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cowp_ros.bringup.spec import load_profile, profile_names, with_parameter_overrides
from cowp_ros.bringup.supervisor import node_command
from cowp_ros.errors import CowpError
from cowp_ros.resources import share_path


def test_every_profile_resolves_with_existing_parameter_files() -> None:
    names = profile_names()
    assert {"sim", "robot", "gazebo", "replay"} <= set(names)
    for name in names:
        profile = load_profile(name)
        assert profile.nodes, name
        for node in profile.nodes:
            for path in node.parameter_files:
                assert path.is_file(), f"{name}/{node.name}: {path} missing"


def test_sim_profile_runs_only_our_nodes_and_selects_topic_backends() -> None:
    profile = load_profile("sim")
    assert [n.name for n in profile.nodes] == [
        "sim_world",
        "planner",
        "commonsense",
        "executor",
        "task_manager",
    ]
    assert not any(n.external for n in profile.nodes)
    executor = profile.node("executor")
    assert executor.parameters["base_backend"] == "topic"
    assert ("execute_skill", "/cowp/execute_skill") in executor.remappings
    assert executor.ready is not None and executor.ready.kind == "action"


def test_robot_profile_expects_drivers_and_uses_nav2() -> None:
    profile = load_profile("robot")
    external = {n.name for n in profile.nodes if n.external}
    assert {"ur_driver", "nav2", "wrist_camera"} <= external
    assert profile.node("executor").parameters["base_backend"] == "nav2"


def test_gazebo_profile_sets_use_sim_time_on_every_node() -> None:
    profile = load_profile("gazebo")
    assert profile.use_sim_time
    assert all(n.parameters.get("use_sim_time") is True for n in profile.nodes if not n.external)


def test_ros_arguments_match_what_launch_ros_would_pass(tmp_path: Path) -> None:
    node = load_profile("sim").node("executor")
    override = tmp_path / "o.yaml"
    args = node.ros_arguments(override)
    assert args[:3] == ["--ros-args", "-r", "__node:=executor"]
    assert args[args.index(str(override)) - 1] == "--params-file"
    assert "execute_skill:=/cowp/execute_skill" in args
    document = node.override_document()
    assert document == {"executor": {"ros__parameters": node.parameters}}
    yaml.safe_dump(document)  # writable as a parameter file


def test_overrides_parse_yaml_values() -> None:
    profile = with_parameter_overrides(
        load_profile("sim"), ["sim_world.scenario=other", "sim_world.rate_hz=50"]
    )
    parameters = profile.node("sim_world").parameters
    assert parameters["scenario"] == "other"
    assert parameters["rate_hz"] == 50


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("sim_world.scenario", "not NODE.PARAM=VALUE"),
        ("nobody.x=1", "names node 'nobody'"),
        ("sim_world.x=[1,", "not valid YAML"),
    ],
)
def test_bad_overrides_are_named(assignment: str, message: str) -> None:
    with pytest.raises(CowpError, match=message.replace("[", r"\[")):
        with_parameter_overrides(load_profile("sim"), [assignment])


def test_unknown_profile_lists_the_known_ones() -> None:
    spec = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "config" / "bringup.yaml").read_text()
    )
    known = ", ".join(sorted(spec["profiles"]))
    assert "physics" in known and "sim" in known
    with pytest.raises(CowpError, match=f"known profiles: {known}$"):
        load_profile("moon")


def test_spec_with_an_undefined_node_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "bringup.yaml"
    spec.write_text("nodes: {}\nprofiles:\n  p:\n    nodes: [ghost]\n")
    with pytest.raises(CowpError, match="undefined node 'ghost'"):
        load_profile("p", spec)


def test_spec_file_lives_in_the_share_folder() -> None:
    assert share_path("config", "bringup.yaml").is_file()


def test_a_node_can_run_at_a_lower_cpu_priority() -> None:
    """The detector yields the CPU to the model server, on the robot and in Gazebo."""
    for profile in ("robot", "gazebo"):
        detector = load_profile(profile).node("situation_detector")
        assert detector.nice == 10 and detector.prefix() == ["nice", "-n", "10"]
        assert load_profile(profile).node("commonsense").prefix() == []


@pytest.mark.parametrize("nice", [-5, 20, 2.5, "high", True])
def test_a_bad_nice_is_named(tmp_path: Path, nice: object) -> None:
    spec = tmp_path / "bringup.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "nodes": {"planner": {"nice": nice}},
                "profiles": {"p": {"description": "d", "nodes": ["planner"]}},
            }
        )
    )
    with pytest.raises(CowpError, match=r"node 'planner': nice must be a whole number from 0 to"):
        load_profile("p", spec)


def test_the_supervisor_starts_a_niced_node_at_the_lower_priority() -> None:
    detector = load_profile("robot").node("situation_detector")
    command = node_command(detector, None)
    assert command[:3] == ["nice", "-n", "10"] and command[3] == sys.executable
    # The prefix really lowers the process's priority (relative to ours).
    ours = os.nice(0)
    niced = subprocess.run(
        [*detector.prefix(), sys.executable, "-c", "import os; print(os.nice(0))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(niced.stdout) == min(ours + 10, 19)
