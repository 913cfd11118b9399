"""Every ROS package of the repository declares itself the way colcon and rosdep expect
(format 3): cowp_ros, cowp_interfaces, and the stand-ins of upstream_interfaces/ (built
by make setup only where no ROS install provides the real package)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from catkin_pkg.package import InvalidPackage, parse_package

ROOT = Path(__file__).resolve().parents[2]
STAND_INS = ("control_msgs", "nav2_msgs", "tf2_msgs")
PACKAGES = [
    (ROOT, "ament_python"),
    (ROOT / "cowp_interfaces", "ament_cmake"),
    *((ROOT / "upstream_interfaces" / name, "ament_cmake") for name in STAND_INS),
]


def test_every_package_manifest_in_the_repository_is_checked() -> None:
    """A package.xml added anywhere (outside the venv and build outputs) is checked here."""
    found = set()
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d != "build"]
        if "package.xml" in files:
            found.add(Path(folder))
    assert found == {folder for folder, _ in PACKAGES}


@pytest.mark.parametrize(("folder", "build_type"), PACKAGES)
def test_package_xml_is_valid_format_3(folder: Path, build_type: str) -> None:
    try:
        package = parse_package(folder / "package.xml")
    except InvalidPackage as err:  # pragma: no cover - the failure message is the point
        pytest.fail(f"{folder / 'package.xml'} is not a valid package manifest: {err}")
    package.validate()
    assert package.package_format == 3
    assert package.get_build_type() == build_type
    assert package.licenses and package.maintainers


def test_cowp_ros_declares_what_it_imports() -> None:
    package = parse_package(ROOT / "package.xml")
    exec_depends = {dep.name for dep in package.exec_depends}
    assert {"rclpy", "cowp_interfaces", "sensor_msgs", "std_msgs"} <= exec_depends


def test_interfaces_listed_in_cmake_exist() -> None:
    cmake = (ROOT / "cowp_interfaces" / "CMakeLists.txt").read_text()
    listed = [
        line.strip().strip('"') for line in cmake.splitlines() if line.strip().startswith('"')
    ]
    assert len(listed) >= 9
    for relative in listed:
        assert (ROOT / "cowp_interfaces" / relative).is_file(), relative
    on_disk = {
        p.relative_to(ROOT / "cowp_interfaces").as_posix()
        for p in (ROOT / "cowp_interfaces").glob("*/*.*")
        if p.suffix in {".msg", ".srv", ".action"}
    }
    assert on_disk == set(listed), "an interface file is not built (or a listed one is missing)"


@pytest.mark.parametrize("name", STAND_INS)
def test_a_stand_in_has_the_real_packages_name_and_says_it_is_one(name: str) -> None:
    package = parse_package(ROOT / "upstream_interfaces" / name / "package.xml")
    assert package.name == name
    assert "rosidl_interface_packages" in [group.name for group in package.member_of_groups]
    assert [e.tagname for e in package.exports if e.tagname == "cowp_ros_stand_in"]
