"""The launch files against stand-ins of launch and launch_ros that resolve like them.

launch and launch_ros are not installable from PyPI, so the few classes the launch files
use are replaced by stand-ins that do what the real ones do where it can fail:

- a `Node` is resolved as launch_ros's ExecutableInPackage does it: the package's
  prefix from the ament index, then `<prefix>/lib/<package>/<executable>` must exist
  and be executable; its parameter files must exist;
- `FindPackageShare` is ament_index_python's `get_package_share_directory`, and an
  included launch file must exist there;
- `Command` runs its command (xacro, for the robot description);
- `OpaqueFunction`s run in order with the launch context, as `ros2 launch` runs them.

They resolve against an install tree built for the test: cowp_ros as colcon installs it
(setup.py's data_files and console scripts), and the upstream packages with exactly the
executables and files docs/kilted_interfaces.md records (with small stand-ins of
ur_description's and ur_robot_driver's macros, so that the real xacro expands the robot
descriptions). A wrong
executable name, a file setup.py does not install, or an upstream file that does not
exist fails here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from cowp_ros import resources
from cowp_ros.bringup.spec import load_profile
from cowp_ros.errors import CowpError

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_DIR = ROOT / "launch"
FACTS = importlib.util.spec_from_file_location(
    "kilted_facts", ROOT / "test" / "skills" / "kilted_facts.py"
)
assert FACTS and FACTS.loader
kilted_facts = importlib.util.module_from_spec(FACTS)
FACTS.loader.exec_module(kilted_facts)


class SubstitutionFailure(Exception):  # noqa: N818 (launch's own name)
    """launch.substitutions.substitution_failure.SubstitutionFailure."""


# --- the install tree ------------------------------------------------------------

UR_MACRO_STAND_IN = """<?xml version="1.0"?>
<!-- Test stand-in of ur_description's ur_robot macro: the parameters it takes
     (docs/kilted_interfaces.md) and the frames and joints it makes, every name
     prefixed with tf_prefix as the real macro does (so a clash with another base_link
     shows here as it does there): base_link, base_link_inertia, base, the six joints'
     links, wrist_3_link, ft_frame, flange, tool0. -->
<robot xmlns:xacro="http://wiki.ros.org/xacro">
  <xacro:macro name="ur_robot" params="name tf_prefix parent *origin
      joint_limits_parameters_file kinematics_parameters_file physical_parameters_file
      visual_parameters_file force_abs_paths:=false">
    <xacro:property name="chain" value="${['base_link_inertia', 'shoulder_link',
        'upper_arm_link', 'forearm_link', 'wrist_1_link', 'wrist_2_link', 'wrist_3_link']}"/>
    <xacro:property name="joints" value="${['shoulder_pan_joint', 'shoulder_lift_joint',
        'elbow_joint', 'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']}"/>
    <xacro:macro name="fixed" params="joint parent child">
      <link name="${tf_prefix}${child}"/>
      <joint name="${tf_prefix}${joint}" type="fixed">
        <parent link="${tf_prefix}${parent}"/>
        <child link="${tf_prefix}${child}"/>
      </joint>
    </xacro:macro>
    <link name="${tf_prefix}base_link"/>
    <joint name="${tf_prefix}base_joint" type="fixed">
      <xacro:insert_block name="origin"/>
      <parent link="${parent}"/>
      <child link="${tf_prefix}base_link"/>
    </joint>
    <xacro:fixed joint="base_link-base_link_inertia" parent="base_link"
                 child="base_link_inertia"/>
    <xacro:fixed joint="base_link-base_fixed_joint" parent="base_link" child="base"/>
    <xacro:macro name="chain_link" params="index">
      <link name="${tf_prefix}${chain[index + 1]}"/>
      <joint name="${tf_prefix}${joints[index]}" type="revolute">
        <parent link="${tf_prefix}${chain[index]}"/>
        <child link="${tf_prefix}${chain[index + 1]}"/>
        <axis xyz="0 0 1"/>
        <limit lower="-6.28" upper="6.28" effort="150" velocity="3.14"/>
      </joint>
      <xacro:if value="${index &lt; 5}"><xacro:chain_link index="${index + 1}"/></xacro:if>
    </xacro:macro>
    <xacro:chain_link index="0"/>
    <xacro:fixed joint="wrist_3_link-ft_frame" parent="wrist_3_link" child="ft_frame"/>
    <xacro:fixed joint="wrist_3-flange" parent="wrist_3_link" child="flange"/>
    <xacro:fixed joint="flange-tool0" parent="flange" child="tool0"/>
  </xacro:macro>
</robot>
"""

UR_ROS2_CONTROL_STAND_IN = """<?xml version="1.0"?>
<!-- Test stand-in of ur_robot_driver's ur_ros2_control macro: the parameters it needs
     (docs/kilted_interfaces.md) and a ros2_control block with the UR's six joints,
     named with tf_prefix as the real macro names them. -->
<robot xmlns:xacro="http://wiki.ros.org/xacro">
  <xacro:macro name="ur_ros2_control" params="name tf_prefix kinematics_parameters_file
      robot_ip script_filename input_recipe_filename output_recipe_filename ur_type
      use_mock_hardware:=false headless_mode:=false">
    <ros2_control name="${name}" type="system">
      <hardware>
        <plugin>ur_robot_driver/URPositionHardwareInterface</plugin>
        <param name="robot_ip">${robot_ip}</param>
        <param name="script_filename">${script_filename}</param>
      </hardware>
      <xacro:macro name="ur_joint" params="joint">
        <joint name="${tf_prefix}${joint}">
          <command_interface name="position"/>
          <state_interface name="position"/>
        </joint>
      </xacro:macro>
      <xacro:ur_joint joint="shoulder_pan_joint"/>
      <xacro:ur_joint joint="shoulder_lift_joint"/>
      <xacro:ur_joint joint="elbow_joint"/>
      <xacro:ur_joint joint="wrist_1_joint"/>
      <xacro:ur_joint joint="wrist_2_joint"/>
      <xacro:ur_joint joint="wrist_3_joint"/>
    </ros2_control>
  </xacro:macro>
</robot>
"""
STAND_INS = {
    "urdf/ur_macro.xacro": UR_MACRO_STAND_IN,
    "urdf/ur.ros2_control.xacro": UR_ROS2_CONTROL_STAND_IN,
}


def setup_py() -> dict[str, Any]:
    """The arguments setup.py gives setuptools.setup (data files, console scripts)."""
    captured: dict[str, Any] = {}
    import setuptools

    real = setuptools.setup
    setuptools.setup = lambda **kwargs: captured.update(kwargs)  # type: ignore[assignment]
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        runpy.run_path(str(ROOT / "setup.py"))
    finally:
        os.chdir(cwd)
        setuptools.setup = real  # type: ignore[assignment]
    return captured


def add_package(prefix: Path, package: str) -> None:
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / package
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    (prefix / "share" / package).mkdir(parents=True, exist_ok=True)


def add_executable(prefix: Path, package: str, name: str) -> None:
    path = prefix / "lib" / package / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)


def build_install_tree(prefix: Path) -> None:
    """cowp_ros as colcon installs it, and the upstream packages the facts record."""
    setup = setup_py()
    for destination, files in setup["data_files"]:
        for name in files:
            target = prefix / destination / Path(name).name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, target)
    for script in setup["entry_points"]["console_scripts"]:
        add_executable(prefix, "cowp_ros", script.split("=")[0].strip())
    facts = kilted_facts.facts()
    spec = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    packages = {p for entry in spec["profiles"].values() for p in entry.get("launch_packages", [])}
    for package in packages:
        add_package(prefix, package)
    for key, fact in facts.items():
        kind, _, package = key.partition(".")
        if kind == "executables":
            add_package(prefix, package)
            for name in fact.values:
                add_executable(prefix, package, name)
        elif kind == "share":
            add_package(prefix, package)
            for name in fact.values:
                path = prefix / "share" / package / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(STAND_INS.get(name, ""))


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("install")
    build_install_tree(prefix)
    return prefix


@pytest.fixture
def installed(install: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Resolve packages in the install tree; cowp_ros's files from its share/ as well."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(install))
    monkeypatch.delenv("COWP_SHARE_DIR", raising=False)
    monkeypatch.setattr(resources, "SOURCE_ROOT", tmp_path / "not-a-source-tree")
    resources.share_dir.cache_clear()
    yield install
    resources.share_dir.cache_clear()


# --- the stand-ins ---------------------------------------------------------------


def perform(value: Any, context: Context) -> Any:
    """A substitution, a list of them, or a plain value, as launch performs it."""
    if isinstance(value, Substitution):
        return value.perform(context)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Substitution) for v in value):
        return "".join(str(perform(v, context)) for v in value)
    if isinstance(value, dict):
        return {k: perform(v, context) for k, v in value.items()}
    if isinstance(value, ParameterValue):
        return value.evaluate(context)
    return value


@dataclass
class Context:
    launch_configurations: dict[str, str] = field(default_factory=dict)


class Substitution:
    def perform(self, context: Context) -> str:
        raise NotImplementedError


class LaunchConfiguration(Substitution):
    def __init__(self, name: str, default: Any = None) -> None:
        self.name, self.default = name, default

    def perform(self, context: Context) -> str:
        if self.name in context.launch_configurations:
            return context.launch_configurations[self.name]
        if self.default is None:
            raise SubstitutionFailure(f"launch configuration '{self.name}' does not exist")
        return str(perform(self.default, context))


class FindPackageShare(Substitution):
    def __init__(self, package: Any) -> None:
        self.package = package

    def perform(self, context: Context) -> str:
        from ament_index_python.packages import get_package_share_directory

        return get_package_share_directory(str(perform(self.package, context)))


class PathJoinSubstitution(Substitution):
    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def perform(self, context: Context) -> str:
        return os.path.join(*(str(perform(p, context)) for p in self.parts))


class FindExecutable(Substitution):
    def __init__(self, *, name: str) -> None:
        self.name = name

    def perform(self, context: Context) -> str:
        found = shutil.which(self.name, path=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
        if found is None:
            raise SubstitutionFailure(f"executable '{self.name}' not found on the PATH")
        return found


class Command(Substitution):
    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def perform(self, context: Context) -> str:
        command = "".join(str(perform(p, context)) for p in self.parts)
        result = subprocess.run(shlex.split(command), capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise SubstitutionFailure(f"command {command!r} failed: {result.stderr}")
        return result.stdout


class ParameterValue:
    def __init__(self, value: Any, *, value_type: type | None = None) -> None:
        self.value, self.value_type = value, value_type

    def evaluate(self, context: Context) -> Any:
        performed = perform(self.value, context)
        return self.value_type(performed) if self.value_type else performed


class Action:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


class LaunchDescription(Action):
    pass


class DeclareLaunchArgument(Action):
    pass


class OpaqueFunction(Action):
    pass


class PythonLaunchDescriptionSource(Action):
    pass


class IncludeLaunchDescription(Action):
    pass


class Node(Action):
    pass


@dataclass
class Resolved:
    """What the launch files made: processes and included launch files, resolved."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    includes: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    declared: dict[str, str] = field(default_factory=dict)

    def node(self, name: str) -> dict[str, Any]:
        (found,) = [n for n in self.nodes if n["name"] == name]
        return found


def resolve_node(action: Node, context: Context) -> dict[str, Any]:
    """launch_ros's Node: ExecutableInPackage, parameter files, evaluated parameters."""
    from ament_index_python.packages import get_package_prefix

    package = str(perform(action.kwargs["package"], context))
    executable = str(perform(action.kwargs["executable"], context))
    libexec = Path(get_package_prefix(package)) / "lib" / package
    if not libexec.is_dir():
        raise SubstitutionFailure(f"package '{package}': libexec directory {libexec} missing")
    path = libexec / executable
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise SubstitutionFailure(f"executable '{executable}' not found in {libexec}")
    parameters = []
    for entry in action.kwargs.get("parameters") or []:
        value = perform(entry, context)
        if isinstance(value, (str, Path)):
            if not Path(value).is_file():
                raise SubstitutionFailure(f"parameter file {value} does not exist")
            value = str(value)
        parameters.append(value)
    return {
        "name": action.kwargs.get("name"),
        "package": package,
        "executable": executable,
        "path": path,
        "parameters": parameters,
        "remappings": list(action.kwargs.get("remappings") or []),
        "arguments": [str(perform(a, context)) for a in action.kwargs.get("arguments") or []],
        # ExecuteProcess's prefix: None is "no prefix" (the launch-prefix argument aside).
        "prefix": str(perform(action.kwargs["prefix"], context))
        if action.kwargs.get("prefix") is not None
        else "",
    }


def visit(action: Any, context: Context, resolved: Resolved) -> None:
    if isinstance(action, LaunchDescription):
        for child in action.args[0]:
            visit(child, context, resolved)
    elif isinstance(action, DeclareLaunchArgument):
        name = action.args[0]
        default = action.kwargs.get("default_value")
        resolved.declared[name] = default
        context.launch_configurations.setdefault(name, default)
    elif isinstance(action, OpaqueFunction):
        function = action.kwargs["function"]
        results = function(
            context, *action.kwargs.get("args", []), **action.kwargs.get("kwargs", {})
        )
        for child in results or []:
            visit(child, context, resolved)
    elif isinstance(action, IncludeLaunchDescription):
        source = action.args[0]
        location = str(perform(source.args[0], context))
        if not Path(location).is_file():
            raise SubstitutionFailure(f"included launch file {location} does not exist")
        arguments = {k: str(perform(v, context)) for k, v in action.kwargs["launch_arguments"]}
        resolved.includes.append((location, arguments))
    elif isinstance(action, Node):
        resolved.nodes.append(resolve_node(action, context))
    else:
        raise AssertionError(f"no stand-in for {action!r}")


@pytest.fixture
def fake_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    modules = {
        "launch": {"LaunchDescription": LaunchDescription},
        "launch.actions": {
            "DeclareLaunchArgument": DeclareLaunchArgument,
            "OpaqueFunction": OpaqueFunction,
            "IncludeLaunchDescription": IncludeLaunchDescription,
        },
        "launch.substitutions": {
            "LaunchConfiguration": LaunchConfiguration,
            "PathJoinSubstitution": PathJoinSubstitution,
            "Command": Command,
            "FindExecutable": FindExecutable,
        },
        "launch.launch_description_sources": {
            "PythonLaunchDescriptionSource": PythonLaunchDescriptionSource
        },
        "launch_ros": {},
        "launch_ros.actions": {"Node": Node},
        "launch_ros.substitutions": {"FindPackageShare": FindPackageShare},
        "launch_ros.parameter_descriptions": {"ParameterValue": ParameterValue},
    }
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        for attribute, value in attributes.items():
            setattr(module, attribute, value)
        monkeypatch.setitem(sys.modules, name, module)


@pytest.fixture(autouse=True)
def llm_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """commonsense needs a language model; a configured server is enough to start."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")


@pytest.fixture
def ros_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The robot profiles' executor imports control_msgs and nav2_msgs, which a Kilted
    install has and this machine cannot: the launch files' profile check sees them."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("control_msgs", "nav2_msgs"):
            return types.SimpleNamespace(name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def run_launch_file(name: str, arguments: dict[str, str] | None = None) -> Resolved:
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), LAUNCH_DIR / name)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    resolved = Resolved()
    visit(module.generate_launch_description(), Context(dict(arguments or {})), resolved)
    return resolved


def assert_nodes_match_profile(
    resolved: Resolved, profile_name: str, install: Path, overrides: dict | None = None
) -> None:
    profile = load_profile(profile_name)
    own = {s.name: s for s in profile.nodes if not s.external}
    ours = [n for n in resolved.nodes if n["name"] in own]
    assert [n["name"] for n in ours] == list(own)
    for node in ours:
        spec = own[node["name"]]
        assert node["package"] == "cowp_ros" == spec.package
        assert node["path"] == install / "lib" / "cowp_ros" / spec.executable
        assert node["remappings"] == list(spec.remappings)
        files = [str(p) for p in spec.parameter_files]
        assert node["parameters"][: len(files)] == files
        assert all(f.startswith(str(install / "share" / "cowp_ros")) for f in files)
        expected = {**spec.parameters, **(overrides or {}).get(spec.name, {})}
        inline = node["parameters"][len(files) :]
        assert (inline[0] if inline else {}) == expected
        assert node["prefix"] == " ".join(spec.prefix())


# --- the tests -------------------------------------------------------------------

pytestmark = pytest.mark.usefixtures("fake_launch", "installed", "ros_messages")


@pytest.mark.parametrize("profile", ["sim", "replay", "robot", "gazebo"])
def test_generic_launch_file_starts_each_profiles_installed_nodes(profile, installed) -> None:
    resolved = run_launch_file("cowp.launch.py", {"profile": profile})
    assert_nodes_match_profile(resolved, profile, installed)


def test_overrides_argument_reaches_the_node_parameters(installed) -> None:
    resolved = run_launch_file(
        "cowp.launch.py", {"overrides": "sim_world.scenario=other sim_world.rate_hz=5"}
    )
    overrides = {"sim_world": {"scenario": "other", "rate_hz": 5}}
    assert_nodes_match_profile(resolved, "sim", installed, overrides)


def test_robot_launch_file_defaults_to_the_robot_profile(installed) -> None:
    resolved = run_launch_file("robot.launch.py")
    assert_nodes_match_profile(resolved, "robot", installed)
    assert set(resolved.declared) == {"profile", "overrides"}
    # The detector yields the CPU to the model deciding a situation.
    assert resolved.node("situation_detector")["prefix"] == "nice -n 10"
    assert resolved.node("commonsense")["prefix"] == ""


def test_a_launch_file_refuses_before_any_node_when_the_profile_lacks_something(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a, **k: None if name == "control_msgs" else real(name, *a, **k),
    )
    with pytest.raises(CowpError, match="ros-kilted-control-msgs"):
        run_launch_file("robot.launch.py")


def test_the_stand_ins_fail_on_a_wrong_executable_or_a_missing_installed_file(
    installed: Path,
) -> None:
    context = Context()
    with pytest.raises(SubstitutionFailure, match="executable 'ur_ros2_control_node'"):
        resolve_node(Node(package="controller_manager", executable="ur_ros2_control_node"), context)
    from ament_index_python.packages import PackageNotFoundError

    with pytest.raises(PackageNotFoundError):
        resolve_node(Node(package="robotiq_hande_driver", executable="hande_driver"), context)
    missing = installed / "share" / "cowp_ros" / "config" / "nothing.yaml"
    with pytest.raises(SubstitutionFailure, match=r"nothing\.yaml does not exist"):
        resolve_node(
            Node(package="cowp_ros", executable="executor", parameters=[str(missing)]), context
        )


# --- Gazebo ------------------------------------------------------------------------


@pytest.fixture
def gazebo(installed: Path) -> Resolved:
    return run_launch_file("gazebo.launch.py")


def test_gazebo_starts_one_gazebo_server_with_the_installed_world(gazebo, installed) -> None:
    (include,) = gazebo.includes
    location, arguments = include
    assert location == str(installed / "share" / "ros_gz_sim" / "launch" / "gz_sim.launch.py")
    assert set(arguments) <= set(kilted_facts.fact("ros_gz_sim.launch_arguments").values)
    world = arguments["gz_args"].split()[-1]
    assert world == str(installed / "share" / "cowp_ros" / "config" / "gazebo" / "kitchen.sdf")
    assert arguments["gz_args"].startswith("-r ")
    assert not any(n["executable"] == "gz" for n in gazebo.nodes)


def test_gazebo_without_gui_renders_the_sensors_headless(installed) -> None:
    """gui:=false: the server alone, and its camera and gpu_lidar rendered without a
    display (gz sim's -s runs no GUI; --headless-rendering renders with EGL)."""
    resolved = run_launch_file("gazebo.launch.py", {"gui": "false"})
    (include,) = resolved.includes
    gz_args = include[1]["gz_args"].split()
    assert {"-r", "-s", "--headless-rendering"} <= set(gz_args)
    assert gz_args[-1].endswith("kitchen.sdf")
    shown = run_launch_file("gazebo.launch.py").includes[0][1]["gz_args"].split()
    assert "-s" not in shown and "--headless-rendering" not in shown


def test_gazebo_nodes_use_simulated_time(gazebo) -> None:
    for node in gazebo.nodes:
        if node["name"] == "spawn_robot":
            continue  # ros_gz_sim create exits once the robot is spawned
        assert any(isinstance(p, dict) and p.get("use_sim_time") is True
                   for p in node["parameters"]), node["name"]  # fmt: skip


def robot_description(gazebo: Resolved) -> ET.Element:
    rsp = gazebo.node("robot_state_publisher")
    text = rsp["parameters"][0]["robot_description"]
    assert isinstance(text, str)
    return ET.fromstring(text)


def test_one_robot_description_with_base_arm_hand_and_camera(gazebo) -> None:
    from cowp_ros.skills.config import load_robot_config

    robot = load_robot_config(ROOT / "config" / "robot.yaml")
    urdf = robot_description(gazebo)
    joints = {j.get("name"): j for j in urdf.findall("joint")}
    assert set(robot.arm.joint_names) <= set(joints)
    # The UR driver's joint names behind the arm's tf_prefix (ur_), on the robot and here.
    assert {f"ur_{j}" for j in kilted_facts.fact("ur.joints").values} == set(robot.arm.joint_names)
    finger = joints[robot.gripper.finger_joint]
    assert finger.get("type") == "prismatic"
    limit = finger.find("limit")
    assert limit is not None
    assert (float(limit.get("lower")), float(limit.get("upper"))) == (
        robot.gripper.closed_position_m,
        robot.gripper.open_position_m,
    )
    mimic = joints[kilted_facts.fact("hande.mimic_joint").value].find("mimic")
    assert mimic is not None and mimic.get("joint") == robot.gripper.finger_joint
    assert {"left_wheel_joint", "right_wheel_joint"} <= set(joints)
    links = {link.get("name") for link in urdf.findall("link")}
    assert {"base_footprint", "base_link", "ur_tool0", "wrist_camera_optical_frame"} <= links
    # ros2_control: every arm joint and the finger commanded by position; the mimic
    # joint with state interfaces only.
    (control,) = urdf.findall("ros2_control")
    assert (
        control.findtext("hardware/plugin") == kilted_facts.fact("gz_ros2_control.hardware").value
    )
    commanded = {
        j.get("name") for j in control.findall("joint") if j.find("command_interface") is not None
    }
    assert commanded == {*robot.arm.joint_names, robot.gripper.finger_joint}
    for joint in control.findall("joint"):
        states = {s.get("name") for s in joint.findall("state_interface")}
        assert set(kilted_facts.fact("parallel_gripper.required_state_interfaces").values) <= states
    home = robot.arm.poses["home"]
    for joint in control.findall("joint"):
        if joint.get("name") in robot.arm.joint_names:
            start = float(joint.findtext("state_interface[@name='position']/param"))
            assert start == pytest.approx(home[robot.arm.joint_names.index(joint.get("name"))])


def tree_problems(urdf: ET.Element) -> list[str]:
    """What urdfdom (and TF) refuse in a robot description: a link or joint name used
    twice, a link with two parents, a joint naming a link that does not exist, other
    than exactly one root."""
    problems = []
    links = [link.get("name") for link in urdf.findall("link")]
    joints = [joint.get("name") for joint in urdf.findall("joint")]
    for kind, names in (("link", links), ("joint", joints)):
        problems += [f"{kind} '{n}' is not unique" for n in sorted(set(names))
                     if names.count(n) > 1]  # fmt: skip
    parents: dict[str, list[str]] = {}
    for joint in urdf.findall("joint"):
        parent = joint.find("parent").get("link")  # type: ignore[union-attr]
        child = joint.find("child").get("link")  # type: ignore[union-attr]
        problems += [f"joint '{joint.get('name')}' names unknown link '{name}'"
                     for name in (parent, child) if name not in links]  # fmt: skip
        parents.setdefault(child, []).append(parent)
    problems += [f"link '{c}' has {len(p)} parents: {p}" for c, p in parents.items() if len(p) > 1]
    roots = sorted(set(links) - set(parents))
    if len(roots) != 1:
        problems.append(f"{len(roots)} root links: {roots}")
    return problems


def test_the_robot_description_is_one_tree_with_unique_names(gazebo) -> None:
    urdf = robot_description(gazebo)
    assert tree_problems(urdf) == []
    links = {link.get("name") for link in urdf.findall("link")}
    # The base's frames keep the names Nav2 and the base's driver use; the arm's carry
    # the UR driver's tf_prefix (docs/robot.md, the TF tree).
    assert {"base_footprint", "base_link", "ur_base_link", "ur_tool0"} <= links
    (root,) = links - {j.find("child").get("link") for j in urdf.findall("joint")}  # type: ignore[union-attr]
    assert root == "base_footprint"


def test_the_rule_check_sees_a_duplicate_link_and_a_second_parent() -> None:
    urdf = ET.fromstring(
        '<robot name="r"><link name="a"/><link name="b"/><link name="b"/><link name="c"/>'
        '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint></robot>'
    )
    problems = tree_problems(urdf)
    assert "link 'b' is not unique" in problems
    assert any("'b' has 2 parents" in p for p in problems)
    assert any("2 root links" in p for p in problems)


CHECK_URDF = shutil.which("check_urdf")
needs_check_urdf = pytest.mark.skipif(
    CHECK_URDF is None,
    reason="check_urdf (Debian liburdfdom-tools) is not installed: make setup installs it as "
    "root, else: sudo apt-get install liburdfdom-tools",
)


@needs_check_urdf
def test_urdfdom_parses_the_robot_description(gazebo, tmp_path: Path) -> None:
    """urdfdom, the C++ parser robot_state_publisher and gz's URDF import use, accepts
    the expanded description (it refuses a duplicate link with "is not unique")."""
    urdf = tmp_path / "cowp_robot.urdf"
    urdf.write_text(gazebo.node("robot_state_publisher")["parameters"][0]["robot_description"])
    result = subprocess.run([CHECK_URDF, str(urdf)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "root Link: base_footprint" in result.stdout


@needs_check_urdf
def test_urdfdom_refuses_a_duplicate_link(tmp_path: Path) -> None:
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="base_link"/><link name="base_link"/></robot>')
    result = subprocess.run([CHECK_URDF, str(bad)], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "not unique" in result.stdout + result.stderr


def test_gazebo_plugins_and_sensors_match_the_bridge_and_the_contract(gazebo) -> None:
    from cowp_ros.skills.config import load_robot_config

    robot = load_robot_config(ROOT / "config" / "robot.yaml")
    urdf = robot_description(gazebo)
    plugins = {p.get("filename"): p for p in urdf.findall("gazebo/plugin")}
    filename, name = kilted_facts.fact("gz_ros2_control.plugin").values
    assert plugins[filename].get("name") == name
    parameters = Path(plugins[filename].findtext("parameters"))
    assert parameters == Path(gazebo.node("spawn_gripper_action_controller")["arguments"][-1])
    assert parameters.is_file()
    known = set(kilted_facts.fact("gz_sim.system_filenames").values)
    assert set(plugins) - {filename} <= known
    drive = plugins["gz-sim-diff-drive-system"]
    allowed = set(kilted_facts.fact("gz_sim.diff_drive_parameters").values)
    assert {child.tag for child in drive} <= allowed
    bridge = yaml.safe_load(
        Path(gazebo.node("ros_gz_bridge")["parameters"][0]["config_file"]).read_text()
    )
    by_gz = {entry["gz_topic_name"]: entry for entry in bridge}
    assert by_gz[drive.findtext("topic")]["ros_topic_name"] == "/cmd_vel"
    assert by_gz[drive.findtext("odom_topic")]["ros_topic_name"] == robot.base.odom_topic
    assert by_gz[drive.findtext("tf_topic")]["ros_topic_name"] == "/tf"
    wheels = plugins["gz-sim-joint-state-publisher-system"]
    assert by_gz[wheels.findtext("topic")]["ros_topic_name"] == "/joint_states"
    sensors = {s.get("type"): s for s in urdf.findall("gazebo/sensor")}
    camera = sensors["camera"]
    assert by_gz[camera.findtext("topic")]["ros_topic_name"] == robot.camera.image_topic
    assert by_gz[camera.findtext("camera/camera_info_topic")]["ros_type_name"] == (
        "sensor_msgs/msg/CameraInfo"
    )
    lidar = sensors["gpu_lidar"]
    assert (
        by_gz[lidar.findtext("topic")]["ros_topic_name"]
        == "/" + kilted_facts.fact("nav2.scan_topic").value
    )


def test_gazebo_spawns_the_robot_and_its_controllers(gazebo, installed) -> None:
    spawn = gazebo.node("spawn_robot")
    arguments = spawn["arguments"]
    options = set(kilted_facts.fact("ros_gz_sim.create_options").values)
    assert {a for a in arguments if a.startswith("-")} <= options
    assert arguments[arguments.index("-topic") + 1] == "robot_description"
    controllers = yaml.safe_load((installed / "share" / "cowp_ros" / "config" / "gazebo" /
                                  "controllers.yaml").read_text())  # fmt: skip
    types_ = controllers["controller_manager"]["ros__parameters"]
    spawned = []
    for node in gazebo.nodes:
        if node["executable"] == "spawner":
            spawned.append(node["arguments"][0])
            flags = {a for a in node["arguments"] if a.startswith("--")}
            assert flags <= set(kilted_facts.fact("controller_manager.spawner_options").values)
    assert spawned == ["joint_state_broadcaster", "scaled_joint_trajectory_controller",
                       "gripper_action_controller"]  # fmt: skip
    assert (
        types_["gripper_action_controller"]["type"]
        == kilted_facts.fact("parallel_gripper.type").value
    )
    assert (
        types_["scaled_joint_trajectory_controller"]["type"]
        == kilted_facts.fact("joint_trajectory_controller.type").value
    )
    gripper = controllers["gripper_action_controller"]["ros__parameters"]
    assert set(gripper) <= set(kilted_facts.fact("parallel_gripper.parameters").values)
    static = gazebo.node("map_to_odom")
    flags = [a for a in static["arguments"] if a.startswith("--")]
    assert set(flags) <= set(kilted_facts.fact("static_transform_publisher.options").values)


def test_gazebo_profile_drives_the_base_without_a_map(gazebo, installed) -> None:
    assert_nodes_match_profile(gazebo, "gazebo", installed)
    assert "base_controller" in {n["name"] for n in gazebo.nodes}
    assert not any("nav2" in location for location, _ in gazebo.includes)


def test_gazebo_nav2_option_starts_navigation_on_the_kitchen_map(installed) -> None:
    resolved = run_launch_file("gazebo.launch.py", {"profile": "gazebo_nav2"})
    assert_nodes_match_profile(resolved, "gazebo_nav2", installed)
    locations = {Path(location).name: arguments for location, arguments in resolved.includes}
    arguments = locations["navigation_launch.py"]
    assert set(arguments) <= set(kilted_facts.fact("nav2_bringup.navigation_arguments").values)
    assert arguments["use_sim_time"] == "true"
    map_server = resolved.node("map_server")
    assert Path(map_server["parameters"][0]["yaml_filename"]).is_file()
    manager = resolved.node("lifecycle_manager_map")
    assert manager["parameters"][0]["node_names"] == ["map_server"]
    assert "base_controller" not in {n["name"] for n in resolved.nodes}


def test_every_package_the_gazebo_launch_file_uses_is_checked_by_the_profile(installed) -> None:
    spec = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    for profile in ("gazebo", "gazebo_nav2"):
        resolved = run_launch_file("gazebo.launch.py", {"profile": profile})
        used = {n["package"] for n in resolved.nodes} - {"cowp_ros"}
        used |= {Path(location).parts[-3] for location, _ in resolved.includes}
        declared = set(spec["profiles"][profile]["launch_packages"])
        assert used <= declared, used - declared


# --- the real robot: UR5e + Hand-E ------------------------------------------------------


def test_ur_and_hand_e_start_one_controller_manager_and_one_description(installed) -> None:
    resolved = run_launch_file("ur_hande.launch.py", {"robot_ip": "192.0.2.10"})
    (include,) = resolved.includes
    location, arguments = include
    assert location == str(
        installed / "share" / "ur_robot_driver" / "launch" / "ur_control.launch.py"
    )
    assert set(arguments) <= set(kilted_facts.fact("ur.launch_arguments").values)
    assert arguments["tf_prefix"] == "ur_"
    assert arguments["robot_ip"] == "192.0.2.10"
    description = Path(arguments["description_launchfile"])
    assert description == installed / "share" / "cowp_ros" / "launch" / description.name
    assert description.is_file()
    # Nothing here starts a controller manager or a robot_state_publisher of its own:
    # the UR driver's launch file starts the one manager, the description file the one
    # publisher.
    executables = {(n["package"], n["executable"]) for n in resolved.nodes}
    assert executables == {("controller_manager", "spawner")}
    (spawner,) = resolved.nodes
    controller, *flags = spawner["arguments"]
    assert controller == "gripper_action_controller"
    assert flags[flags.index("--controller-manager") + 1] == "/controller_manager"
    assert {f for f in flags if f.startswith("--")} <= set(
        kilted_facts.fact("controller_manager.spawner_options").values
    )
    params = yaml.safe_load(Path(flags[flags.index("--param-file") + 1]).read_text())
    gripper = params[controller]["ros__parameters"]
    assert gripper["type"] == kilted_facts.fact("parallel_gripper.type").value
    assert "type" in kilted_facts.fact("controller_manager.type_from_param_file").values
    assert set(gripper) - {"type"} <= set(kilted_facts.fact("parallel_gripper.parameters").values)
    from cowp_ros.skills.config import load_robot_config

    robot = load_robot_config(ROOT / "config" / "robot.yaml")
    assert gripper["joint"] == robot.gripper.finger_joint
    assert controller == robot.gripper.controller


@pytest.fixture
def real_description(installed: Path) -> Resolved:
    """ur_hande_description.launch.py as ur_control.launch.py includes it: with exactly
    the arguments it passes (robot_ip, ur_type)."""
    passed = kilted_facts.fact("ur.description_launchfile").values
    values = {"robot_ip": "192.0.2.10", "ur_type": "ur5e"}
    assert set(passed) == set(values)
    return run_launch_file("ur_hande_description.launch.py", values)


def test_the_real_robot_description_holds_arm_and_hand(real_description) -> None:
    (rsp,) = real_description.nodes
    assert (rsp["package"], rsp["executable"]) == ("robot_state_publisher",) * 2
    urdf = ET.fromstring(rsp["parameters"][0]["robot_description"])
    assert tree_problems(urdf) == []
    links = {link.get("name") for link in urdf.findall("link")}
    (root,) = links - {j.find("child").get("link") for j in urdf.findall("joint")}  # type: ignore[union-attr]
    assert root == "base_link"  # the base's driver publishes base_footprint -> base_link
    assert {"ur_base_link", "ur_tool0", "robotiq_hande_base_link"} <= links
    from cowp_ros.skills.config import load_robot_config

    robot = load_robot_config(ROOT / "config" / "robot.yaml")
    blocks = {c.findtext("hardware/plugin"): c for c in urdf.findall("ros2_control")}
    hande = blocks.pop(kilted_facts.fact("hande.plugin").value)
    (ur,) = blocks.values()
    ur_joints = [j.get("name") for j in ur.findall("joint")]
    assert ur_joints == list(robot.arm.joint_names)
    assert ur.findtext("hardware/param[@name='robot_ip']") == "192.0.2.10"
    assert ur.findtext("hardware/param[@name='script_filename']").endswith(
        "ur_client_library/resources/external_control.urscript"
    )
    parameters = {p.get("name"): p.text for p in hande.findall("hardware/param")}
    assert set(parameters) == set(kilted_facts.fact("hande.hardware_parameters").values)
    assert parameters["tty"] == "/dev/ttyUSB0"
    assert float(parameters["grip_pos_max"]) == robot.gripper.open_position_m
    (finger,) = hande.findall("joint")
    assert finger.get("name") == robot.gripper.finger_joint
    commands = [c.get("name") for c in finger.findall("command_interface")]
    # the position, and the force the patched driver exports (the controller's
    # max_effort_interface, config/robot/hande_controller.yaml)
    controller = yaml.safe_load((ROOT / "config" / "robot" / "hande_controller.yaml").read_text())
    effort = controller["gripper_action_controller"]["ros__parameters"]["max_effort_interface"]
    assert commands == ["position", effort] == ["position", "force"]
    assert hande.get("is_async") == "true"  # Modbus off the UR's 500 Hz loop


@needs_check_urdf
def test_urdfdom_parses_the_real_robot_description(real_description, tmp_path: Path) -> None:
    urdf = tmp_path / "ur_hande.urdf"
    urdf.write_text(real_description.nodes[0]["parameters"][0]["robot_description"])
    result = subprocess.run([CHECK_URDF, str(urdf)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "root Link: base_link" in result.stdout


# The two lines of the Hand-E driver's export_command_interfaces (robotiq_hande_driver,
# hardware/src/hande_hardware_interface.cpp at the commit docs/robot.md pins) that the
# documented patch changes: the force command exported under the position's name.
HANDE_EXPORTS = """\
    command_interfaces.emplace_back(hardware_interface::CommandInterface(
        info_.joints[LEFT_FINGER_JOINT_ID].name,
        hardware_interface::HW_IF_POSITION,
        &cmd_position_));
    command_interfaces.emplace_back(hardware_interface::CommandInterface(
        info_.joints[LEFT_FINGER_JOINT_ID].name, hardware_interface::HW_IF_POSITION, &cmd_force_));
"""


def test_the_documented_hand_e_patch_renames_the_duplicate_interface(tmp_path: Path) -> None:
    """Step 1's commands for the Hand-E driver, run in a src/ folder holding the lines
    they change (continuation lines joined, as the shell joins them)."""
    doc = (ROOT / "docs" / "robot.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", doc, flags=re.S)
    (block,) = [b for b in blocks if "robotiq_hande_driver checkout" in b]
    lines = block.replace("\\\n", " ").splitlines()
    (checkout,) = [ln for ln in lines if ln.startswith("git -C robotiq_hande_driver checkout ")]
    assert re.fullmatch(r"git -C robotiq_hande_driver checkout [0-9a-f]{40}", checkout)
    (sed,) = [ln for ln in lines if ln.startswith("sed -i")]
    (count,) = [ln for ln in lines if ln.startswith("grep -c")]
    source = (
        tmp_path / "robotiq_hande_driver" / "robotiq_hande_driver" / "hardware" / "src"
        / "hande_hardware_interface.cpp"
    )  # fmt: skip
    source.parent.mkdir(parents=True)
    source.write_text(HANDE_EXPORTS)
    subprocess.run(["bash", "-c", sed], cwd=tmp_path, check=True)
    patched = source.read_text()
    assert patched.count("HW_IF_POSITION") == 1  # the position command keeps its name
    assert '"force", &cmd_force_' in patched
    result = subprocess.run(["bash", "-c", count.split("#")[0]], cwd=tmp_path,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.stdout.strip() == "1"
    assert block.index(checkout) < block.index("colcon build")  # patched before the build


def test_the_docs_start_the_arm_and_hand_through_one_launch_file() -> None:
    doc = (ROOT / "docs" / "robot.md").read_text()
    commands = "\n".join(re.findall(r"```bash\n(.*?)```", doc, flags=re.S))
    assert "ros2 launch cowp_ros ur_hande.launch.py robot_ip:=" in commands
    assert "ros2 launch ur_robot_driver" not in commands
    assert "robotiq_hande_driver" not in " ".join(
        ln for ln in commands.splitlines() if ln.startswith("ros2 launch")
    )
