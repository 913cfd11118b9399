"""The core never needs ROS: every module outside the ROS layer imports with rclpy,
cowp_interfaces and the ROS message packages made unimportable."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import cowp_ros

ROS_LAYER = ("cowp_ros.ros", "cowp_ros.bringup")
BLOCKED = ("rclpy", "cowp_interfaces", "rcl_interfaces", "action_msgs", "sensor_msgs",
           "geometry_msgs", "std_msgs", "trajectory_msgs", "nav_msgs", "builtin_interfaces",
           "rosbags", "ament_index_python")  # fmt: skip


def core_modules() -> list[str]:
    found = []
    for info in pkgutil.walk_packages(cowp_ros.__path__, "cowp_ros."):
        if not info.name.startswith(ROS_LAYER):
            found.append(info.name)
    return sorted(found)


def test_the_core_is_most_of_the_package() -> None:
    modules = core_modules()
    rooms = ("llm", "cowp", "methods", "bench", "planning", "pddl", "cli", "skills", "tasks")
    for room in (f"cowp_ros.{name}" for name in rooms):
        assert any(m.startswith(room) for m in modules), room
    assert "cowp_ros.cowp.driver" in modules


def test_every_core_module_imports_without_ros(tmp_path: Path) -> None:
    script = f"""
import importlib, importlib.abc, sys

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ModuleNotFoundError(f"{{name}} is blocked: the core must not need ROS")
        return None

sys.meta_path.insert(0, Blocker())
failed = []
for name in {core_modules()!r}:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as err:
        if "blocked" in str(err):
            failed.append(f"{{name}}: {{err}}")
    except Exception:
        pass  # optional dependencies (torch, cv2) are another matter
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_only_the_ros_layer_names_rclpy() -> None:
    package = Path(cowp_ros.__file__).parent
    naming = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "rclpy" in path.read_text()
        and not str(path.relative_to(package)).startswith(("ros/", "bringup/"))
    ]
    assert naming == []
