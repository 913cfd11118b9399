"""docker/ and config/gazebo/ checked statically: neither Docker nor Gazebo runs here.

The checks hold the files to what they promise: the Dockerfile starts from the official
Kilted image and repeats scripts/setup.sh's steps (requirements, interfaces, package);
compose has the sim and robot services on the host network with ROS_DOMAIN_ID; the
Gazebo world holds what robot.yaml's locations expect, and the bridge moves the topics
the executor and the detector read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from cowp_ros.skills.config import RobotConfig

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"


def dockerfile() -> str:
    return (DOCKER / "Dockerfile").read_text()


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", dockerfile())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def test_base_image_is_the_official_kilted_image() -> None:
    args = dict(
        a.split("=", 1) for word, a in instructions() if word == "ARG" and "=" in a
    )  # fmt: skip
    (base,) = [a for word, a in instructions() if word == "FROM"]
    resolved = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], base)
    assert resolved in {"ros:kilted", "osrf/ros:kilted-desktop"}, resolved


def test_python_requirements_are_the_setup_scripts() -> None:
    runs = " ".join(a for word, a in instructions() if word == "RUN")
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "requirements/core.txt" in setup and "requirements/core.txt" in runs
    # Only PyYAML is left to apt (python3-yaml), everything else comes from core.txt.
    assert re.search(r"grep -v -i '\^pyyaml' requirements/core.txt", runs)
    assert "python3-yaml" in runs
    perception = "-c requirements/perception-constraints.txt -r requirements/perception.txt"
    assert perception in runs, "perception must keep torch on its CPU pin"
    for copied in [a.split()[0] for word, a in instructions() if word == "COPY"]:
        assert (ROOT / copied).exists(), f"COPY {copied}: no such path"


def test_workspace_is_built_with_colcon_like_the_readme_says() -> None:
    runs = " ".join(a for word, a in instructions() if word == "RUN")
    assert "rosdep install --from-paths . cowp_interfaces" in runs
    assert "colcon build --base-paths . cowp_interfaces" in runs
    assert "source /opt/ros/${ROS_DISTRO}/setup.bash" in runs
    entry = (DOCKER / "entrypoint.sh").read_text()
    assert "/ws/install/setup.bash" in entry and entry.rstrip().endswith('exec "$@"')
    assert (DOCKER / "entrypoint.sh").stat().st_mode & 0o111


def test_robot_backends_apt_packages_are_installed() -> None:
    runs = " ".join(a for word, a in instructions() if word == "RUN")
    for package in ("control-msgs", "nav2-simple-commander"):
        assert f"ros-${{ROS_DISTRO}}-{package}" in runs


def test_build_context_leaves_local_workspaces_out() -> None:
    ignored = (DOCKER / "Dockerfile.dockerignore").read_text().split()
    assert {".venv/", "build/", ".git/"} <= set(ignored)


def test_compose_has_sim_and_robot_on_the_host_network() -> None:
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    bringup = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    services = compose["services"]
    assert {"sim", "robot"} <= set(services)
    for name in ("sim", "robot"):
        service = services[name]
        assert service["network_mode"] == "host"
        assert "ROS_DOMAIN_ID" in service["environment"]
        build = service["build"]
        assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == (
            DOCKER / "Dockerfile"
        )
        command = service["command"]
        profile = command[command.index("--profile") + 1]
        assert profile == name and profile in bringup["profiles"]


def test_gazebo_world_has_the_kitchen(robot: RobotConfig) -> None:
    world = ET.parse(ROOT / "config" / "gazebo" / "kitchen.sdf").getroot().find("world")
    assert world is not None
    models = {m.get("name"): m for m in world.findall("model")}
    assert {"ground_plane", "counter", "table", "cup", "bowl", "camera"} <= set(models)
    plugins = {p.get("filename") for p in world.findall("plugin")}
    assert {"gz-sim-physics-system", "gz-sim-sensors-system"} <= plugins

    def xy(name: str) -> tuple[float, float]:
        x, y = (float(v) for v in models[name].findtext("pose", "").split()[:2])
        return x, y

    # Each piece of furniture stands within reach in front of its named location.
    for name in ("counter", "table", "sink"):
        location = robot.base.locations[name]
        x, y = xy(name)
        distance = ((x - location.x) ** 2 + (y - location.y) ** 2) ** 0.5
        assert 0.5 <= distance <= 1.0, f"{name} is {distance:.2f} m from its location"
    sensors = world.findall(".//sensor[@type='camera']")
    assert [s.findtext("topic") for s in sensors] == [robot.camera.image_topic.lstrip("/")]


def test_bridge_moves_the_topics_the_stack_reads(robot: RobotConfig) -> None:
    entries = yaml.safe_load((ROOT / "config" / "gazebo" / "bridge.yaml").read_text())
    keys = {"ros_topic_name", "gz_topic_name", "ros_type_name", "gz_type_name", "direction"}
    pairs = {
        "rosgraph_msgs/msg/Clock": "gz.msgs.Clock",
        "sensor_msgs/msg/Image": "gz.msgs.Image",
        "sensor_msgs/msg/CameraInfo": "gz.msgs.CameraInfo",
        "nav_msgs/msg/Odometry": "gz.msgs.Odometry",
        "sensor_msgs/msg/JointState": "gz.msgs.Model",
        "geometry_msgs/msg/Twist": "gz.msgs.Twist",
    }
    by_topic = {}
    for entry in entries:
        assert keys <= set(entry), entry
        assert entry["direction"] in {"GZ_TO_ROS", "ROS_TO_GZ", "BIDIRECTIONAL"}
        assert pairs[entry["ros_type_name"]] == entry["gz_type_name"], entry
        by_topic[entry["ros_topic_name"]] = entry
    assert by_topic["/clock"]["direction"] == "GZ_TO_ROS"
    assert by_topic[robot.camera.image_topic]["ros_type_name"] == "sensor_msgs/msg/Image"
    assert by_topic[robot.base.odom_topic]["ros_type_name"] == "nav_msgs/msg/Odometry"
    assert by_topic["/cmd_vel"]["direction"] == "ROS_TO_GZ"
    # The arm's /joint_states come from gz_ros2_control; the bridge must not add to them.
    assert robot.arm.joint_states_topic not in by_topic
