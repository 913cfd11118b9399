"""ament_python package for cowp_ros: the `cowp` CLI and the ROS 2 nodes."""

from glob import glob
from os.path import dirname, isfile, relpath

from setuptools import find_packages, setup

PACKAGE = "cowp_ros"


def tree(folder: str) -> list[tuple[str, list[str]]]:
    """data_files entries that install every file under `folder` into share/cowp_ros/."""
    entries: dict[str, list[str]] = {}
    for path in sorted(glob(f"{folder}/**/*", recursive=True)):
        if isfile(path) and "__pycache__" not in path:
            entries.setdefault(f"share/{PACKAGE}/{dirname(path)}", []).append(path)
    return sorted(entries.items())


def package_files() -> list[str]:
    """Every file inside the Python package that is not Python (py.typed, the YAML data
    the code reads with importlib.resources), relative to the package, for package_data:
    a data file added later is installed without touching this list."""
    found = []
    for path in sorted(glob(f"{PACKAGE}/**/*", recursive=True)):
        if isfile(path) and not path.endswith((".py", ".pyc")) and "__pycache__" not in path:
            found.append(relpath(path, PACKAGE))
    return found


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE: package_files()},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        *tree("launch"),
        *tree("config"),
        *tree("pddl"),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="cowp_ros maintainers",
    maintainer_email="cowp-ros@example.org",
    description="Open-world task planning (COWP) for a ROS 2 mobile manipulator.",
    license="MIT",
    entry_points={
        "console_scripts": [
            "cowp = cowp_ros.cli:main",
            "executor = cowp_ros.ros.nodes.executor:main",
            "situation_detector = cowp_ros.ros.nodes.situation_detector:main",
            "vlm_checker = cowp_ros.ros.nodes.vlm_checker:main",
            "planner = cowp_ros.ros.nodes.planner:main",
            "commonsense = cowp_ros.ros.nodes.commonsense:main",
            "task_manager = cowp_ros.ros.nodes.task_manager:main",
            "sim_world = cowp_ros.ros.nodes.sim_world:main",
            "physics_world = cowp_ros.ros.nodes.physics_world:main",
            "base_controller = cowp_ros.ros.nodes.base_controller:main",
        ],
    },
)
