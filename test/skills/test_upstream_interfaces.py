"""The stand-ins of upstream_interfaces/ held to the rows of docs/kilted_interfaces.md.

control_msgs, nav2_msgs and tf2_msgs are not installable here, so `make setup` builds
the part cowp_ros uses from upstream_interfaces/ into the venv. The generated Python
types are imported and compared with the documented facts: every field of every goal,
result, feedback and message, in order and with its type, and every constant. Each
test also says which build was imported (`cowp_ros.ros.interface_origin`): here it
must be this workspace's. Nothing goes over DDS: the type support is loaded, no node is
made.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import kilted_facts
import pytest
from catkin_pkg.packages import find_packages

from cowp_ros.ros import interface_origin

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "upstream_interfaces"
PACKAGES = ("control_msgs", "nav2_msgs", "tf2_msgs")

# (fact key, "package/kind/Type", part): each generated message and the row it must match.
FIELD_FACTS = [
    *(
        (f"{action}.{part}", f"control_msgs/action/{action}", part.capitalize())
        for action in ("FollowJointTrajectory", "ParallelGripperCommand", "GripperCommand")
        for part in ("goal", "result", "feedback")
    ),
    *(
        (f"NavigateToPose.{part}", "nav2_msgs/action/NavigateToPose", part.capitalize())
        for part in ("goal", "result", "feedback")
    ),
    ("JointTolerance.fields", "control_msgs/msg/JointTolerance", None),
    ("JointComponentTolerance.fields", "control_msgs/msg/JointComponentTolerance", None),
    ("GripperCommand.command", "control_msgs/msg/GripperCommand", None),
    ("TFMessage.fields", "tf2_msgs/msg/TFMessage", None),
]

# The .msg spelling of a primitive -> the rosidl (IDL) spelling the Python types report.
_IDL = {"bool": "boolean", "byte": "octet", "char": "uint8", "float32": "float"}
_IDL["float64"] = "double"


def idl_type(msg_type: str) -> str:
    """A row's `.msg` type as get_fields_and_field_types() spells it."""
    bounded = re.fullmatch(r"(.+)\[<=(\d+)\]", msg_type)
    if bounded:
        return f"sequence<{idl_type(bounded[1])}, {bounded[2]}>"
    array = re.fullmatch(r"(.+)\[(\d*)\]", msg_type)
    if array:
        inner = idl_type(array[1])
        return f"{inner}[{array[2]}]" if array[2] else f"sequence<{inner}>"
    return _IDL.get(msg_type, msg_type)


def test_idl_type_spells_what_rosidl_reports() -> None:
    assert idl_type("float64") == "double" and idl_type("bool") == "boolean"
    assert idl_type("string[]") == "sequence<string>"
    assert idl_type("control_msgs/JointTolerance[]") == "sequence<control_msgs/JointTolerance>"
    assert idl_type("float32[3]") == "float[3]" and idl_type("int8[<=4]") == "sequence<int8, 4>"


def load(type_name: str, part: str | None = None) -> type:
    package, kind, name = type_name.split("/")
    interface = getattr(importlib.import_module(f"{package}.{kind}"), name)
    return getattr(interface, part) if part else interface


def constants(message: type) -> dict[str, object]:
    """The message's constants: rosidl makes each a property of its metaclass."""
    meta = type(message)
    return {n: getattr(message, n) for n, v in vars(meta).items() if isinstance(v, property)}


def named_values(key: str) -> dict[str, int]:
    """A fact listing `NAME=value` constants, as {NAME: value}."""
    pairs = [value.split("=", 1) for value in kilted_facts.fact(key).values]
    return {name: int(number) for name, number in pairs}


@pytest.fixture(scope="module", autouse=True)
def origins() -> dict[str, interface_origin.InterfaceOrigin]:
    """Which build each package imports from; here, with no ROS install, this workspace's."""
    found = {o.package: o for o in interface_origin.interface_origins()}
    for package in PACKAGES:
        origin = found[package]
        print(origin.describe())
        if origin.origin == "missing":
            pytest.fail(f"{origin.describe()}: run make setup (step upstream_interfaces)")
    return found


# --- (a) the generated types are the documented ones ---------------------------------


@pytest.mark.parametrize(("key", "type_name", "part"), FIELD_FACTS, ids=[f[0] for f in FIELD_FACTS])
def test_fields_are_the_documented_ones_in_order(
    key: str, type_name: str, part: str | None
) -> None:
    message = load(type_name, part)
    documented = [(name, idl_type(kind)) for name, kind in kilted_facts.fields(key).items()]
    assert list(message.get_fields_and_field_types().items()) == documented
    message()  # and it builds with its defaults


def test_follow_joint_trajectory_result_codes_are_the_documented_ones() -> None:
    prefix = "FollowJointTrajectory."
    documented = {
        key.removeprefix(prefix): int(kilted_facts.fact(key).value)
        for key in kilted_facts.facts()
        if key.startswith(prefix) and key.removeprefix(prefix).isupper()
    }
    assert {"SUCCESSFUL", "PATH_TOLERANCE_VIOLATED", "GOAL_TOLERANCE_VIOLATED"} <= set(documented)
    assert constants(load("control_msgs/action/FollowJointTrajectory", "Result")) == documented


def test_navigate_to_pose_error_codes_are_kilteds() -> None:
    result = load("nav2_msgs/action/NavigateToPose", "Result")
    assert constants(result) == named_values("NavigateToPose.error_codes")
    assert result.get_fields_and_field_types()["error_code"] == "uint16"


def test_joint_component_tolerance_components_are_the_documented_ones() -> None:
    message = load("control_msgs/msg/JointComponentTolerance")
    assert constants(message) == named_values("JointComponentTolerance.components")


def test_no_other_type_has_constants() -> None:
    with_constants = {
        ("control_msgs/action/FollowJointTrajectory", "Result"),
        ("nav2_msgs/action/NavigateToPose", "Result"),
        ("control_msgs/msg/JointComponentTolerance", None),
    }
    for _, type_name, part in FIELD_FACTS:
        if (type_name, part) not in with_constants:
            assert constants(load(type_name, part)) == {}, (type_name, part)


@pytest.mark.parametrize(
    "key",
    [
        "FollowJointTrajectory.type",
        "ParallelGripperCommand.type",
        "GripperCommand.type",
        "NavigateToPose.type",
        "TFMessage.type",
    ],
)
def test_each_documented_type_imports_by_its_name(key: str) -> None:
    type_name = kilted_facts.fact(key).value
    assert load(type_name).__name__ == type_name.rsplit("/", 1)[1]


def test_every_interface_file_is_built_and_checked() -> None:
    """Each .msg/.action is listed in its CMakeLists.txt and checked above against a row,
    and says it was written from the documented fields."""
    checked = {type_name for _, type_name, _ in FIELD_FACTS}
    for package in PACKAGES:
        folder = UPSTREAM / package
        cmake = (folder / "CMakeLists.txt").read_text()
        listed = set(re.findall(r'"((?:msg|action|srv)/\w+\.\w+)"', cmake))
        on_disk = {p.relative_to(folder).as_posix() for p in folder.glob("*/*.*")}
        assert listed == on_disk, package
        for relative in on_disk:
            name = f"{package}/{Path(relative).parent}/{Path(relative).stem}"
            assert name in checked, f"{name} is built but no test holds it to a row"
            header = (folder / relative).read_text().splitlines()[0]
            assert header.startswith("# Written from the documented fields"), relative


# --- (b) which build was imported -----------------------------------------------------


@pytest.mark.parametrize("package", PACKAGES)
def test_the_workspace_build_is_imported_here(
    package: str, origins: dict[str, interface_origin.InterfaceOrigin]
) -> None:
    origin = origins[package]
    assert origin.origin == "workspace" and origin.is_workspace_build, origin.describe()
    assert origin.in_venv and origin.loads, origin.describe()
    assert origin.manifest == Path(sys.prefix).resolve() / "share" / package / "package.xml"
    assert origin.path == Path(importlib.import_module(package).__file__ or "").resolve().parent


def fake_install(prefix: Path, package: str, stand_in: bool) -> Path:
    """An install prefix with a package that imports but has no type support."""
    site = prefix / "lib" / "python3.11" / "site-packages"
    kind, name = interface_origin.PROBES[package]
    (site / package / kind).mkdir(parents=True)
    (site / package / "__init__.py").write_text("")
    (site / package / kind / "__init__.py").write_text(f"class {name}:\n    pass\n")
    share = prefix / "share" / package
    share.mkdir(parents=True)
    marker = f"<{interface_origin.STAND_IN_TAG}>x</{interface_origin.STAND_IN_TAG}>"
    (share / "package.xml").write_text(
        f'<package format="3"><name>{package}</name>'
        f"<export>{marker if stand_in else ''}<build_type>ament_cmake</build_type></export>"
        "</package>"
    )
    return site


def probe(*sites: Path) -> list[str]:
    """setup.sh's probe, run by path as setup runs it, with `sites` first on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, sites))}
    result = subprocess.run(
        [sys.executable, "-P", str(Path(interface_origin.__file__)), "--porcelain"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.splitlines()


def test_a_ros_install_first_on_the_path_wins_and_is_told_apart(tmp_path: Path) -> None:
    """As with a sourced ROS install: the real package comes first on PYTHONPATH, and
    only its package.xml (no stand-in marker) tells it from this workspace's build."""
    real = fake_install(tmp_path / "opt_ros", "tf2_msgs", stand_in=False)
    ours = fake_install(tmp_path / "workspace", "nav2_msgs", stand_in=True)
    assert probe(real, ours) == [
        "control_msgs workspace loads",  # this venv's build
        "nav2_msgs workspace fails",  # the fake ones have no type support
        "tf2_msgs ros fails",
    ]


def test_a_package_that_imports_without_type_support_is_reported(tmp_path: Path) -> None:
    site = fake_install(tmp_path / "opt_ros", "tf2_msgs", stand_in=False)
    sys.path.insert(0, str(site))
    saved = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "tf2_msgs"}
    for name in saved:
        del sys.modules[name]
    try:
        origin = interface_origin.interface_origin("tf2_msgs")
    finally:
        sys.path.remove(str(site))
        for name in [n for n in sys.modules if n.split(".")[0] == "tf2_msgs"]:
            del sys.modules[name]
        sys.modules.update(saved)
    assert origin.origin == "ros" and not origin.is_workspace_build and not origin.loads
    assert origin.manifest == tmp_path / "opt_ros" / "share" / "tf2_msgs" / "package.xml"
    assert "type support does not load" in origin.describe()


# --- never found by a plain colcon build or by rosdep ----------------------------------


def colcon_list(*base_paths: str) -> list[str]:
    colcon = Path(sys.executable).parent / "colcon"
    if not colcon.is_file():
        pytest.skip(f"colcon is not installed in {colcon.parent}: run make setup")
    result = subprocess.run(
        [str(colcon), "--log-base", os.devnull, "list", "-n", "--base-paths", *base_paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return sorted(result.stdout.split())


def test_colcon_finds_them_only_where_named() -> None:
    assert (UPSTREAM / "COLCON_IGNORE").is_file()
    # setup.sh's base paths: each package folder named, the marker above it notwithstanding
    assert colcon_list(*(f"upstream_interfaces/{p}" for p in PACKAGES)) == sorted(PACKAGES)
    # a plain build from the repository, or of every folder in it, never finds them
    assert colcon_list(".") == ["cowp_ros"]
    every_folder = [p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert "upstream_interfaces" in every_folder
    assert not set(colcon_list(*every_folder)) & set(PACKAGES)


def test_rosdep_discovery_does_not_find_them() -> None:
    """rosdep's --from-paths uses catkin_pkg, which honours the same marker."""
    assert find_packages(str(UPSTREAM)) == {}
    assert list(find_packages(str(UPSTREAM / "control_msgs"))) == ["."]
