"""Both ROS packages declare themselves the way colcon and rosdep expect (format 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from catkin_pkg.package import InvalidPackage, parse_package

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("folder", "build_type"),
    [(ROOT, "ament_python"), (ROOT / "cowp_interfaces", "ament_cmake")],
)
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
