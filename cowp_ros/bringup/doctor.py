"""Health checks behind `cowp doctor`: is this workspace able to run the stack?

Required checks fail the command (exit 1); optional parts only report whether they are
installed, because a user may run the stack without, say, YOLO or Fast Downward.
Every failing check says what to do about it. `cowp doctor --profile P` also checks
what the nodes of profile P need (a detector model, a language model, control_msgs,
nav2_msgs, the Gazebo packages), the same check `cowp bringup` and the launch files
make before they start anything.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass

from cowp_ros.errors import CowpError
from cowp_ros.skills.backends import CONTROL_MSGS, NAV2_MSGS


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def check_import(name: str, module: str, hint: str, required: bool = True) -> Check:
    """Import `module` for real (a broken native library only shows on import)."""
    try:
        imported = importlib.import_module(module)
    except Exception as err:  # any import failure is the finding, whatever its type
        return Check(name, False, f"cannot import {module}: {err}; {hint}", required)
    where = getattr(imported, "__file__", None) or "built in"
    return Check(name, True, f"{module} ({where})", required)


def check_installed(name: str, module: str, hint: str) -> Check:
    """An optional part: present or not, without paying for its import."""
    if importlib.util.find_spec(module) is None:
        return Check(name, False, f"not installed; {hint}", required=False)
    return Check(name, True, f"{module} installed", required=False)


def check_environment() -> Check:
    """DDS settings that make tests and demos stay on this machine."""
    scope = os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "(unset: SUBNET)")
    domain = os.environ.get("ROS_DOMAIN_ID", "(unset: 0)")
    return Check(
        "DDS settings",
        True,
        f"ROS_DOMAIN_ID={domain}, ROS_AUTOMATIC_DISCOVERY_RANGE={scope}",
        required=False,
    )


def check_llm_model() -> Check:
    """The embedded model's file, verified (sha256 once, then its stamp) as before use."""
    name = "embedded LLM weights (optional)"
    try:
        from cowp_ros.llm.model_store import resolve_model, verify_resolved

        model = resolve_model()
        info = verify_resolved(model)
    except Exception as err:  # missing, corrupt or not provisioned: the finding
        return Check(name, False, f"{err}; run `make setup` (step llm_model)", required=False)
    return Check(name, True, f"{model.name}: {info.general_name} ({model.path})", required=False)


def check_detector_model() -> Check:
    name = "YOLO detector model (optional)"
    try:
        from cowp_ros.perception.models import resolve_model

        path = resolve_model()
    except Exception as err:  # missing: the finding
        return Check(name, False, f"{err}", required=False)
    return Check(name, True, str(path), required=False)


def check_dds_roundtrip() -> Check:
    from cowp_ros.bringup.dds_selftest import run_selftest

    result = run_selftest()
    return Check("DDS pub/sub across two processes", result.ok, result.detail)


SETUP_HINT = "run `make setup`"


def all_checks() -> list[Callable[[], Check]]:
    """The checks in the order a person would debug them: imports, then the network."""
    return [
        lambda: check_import("rclpy", "rclpy", SETUP_HINT),
        lambda: check_import(
            "cowp_interfaces", "cowp_interfaces.action", f"{SETUP_HINT} (builds it)"
        ),
        lambda: check_import("PDDL parser", "pddl", SETUP_HINT),
        lambda: check_import("pyperplan planner", "pyperplan", SETUP_HINT),
        lambda: check_import("HTTP client for model servers", "httpx", SETUP_HINT),
        lambda: check_import("rosbags", "rosbags.rosbag2", SETUP_HINT),
        check_environment,
        check_dds_roundtrip,
        lambda: check_installed(
            "Fast Downward (optional planner)", "up_fast_downward", "pip install up-fast-downward"
        ),
        lambda: check_installed(
            "embedded LLM runtime (xllamacpp)", "xllamacpp", "run `make setup` (step llm_model)"
        ),
        check_llm_model,
        lambda: check_installed(
            "YOLO via ultralytics (optional)", "ultralytics", "run `make setup` (step perception)"
        ),
        lambda: check_installed(
            "onnxruntime detector backend (optional)",
            "onnxruntime",
            "run `make setup` (step perception)",
        ),
        check_detector_model,
    ]


# --- what a profile's nodes need --------------------------------------------------
#
# A node that cannot start takes its whole profile down (cowp bringup stops every
# node when one dies), and on a stock Kilted install the first to die is whichever
# imports something the README's colcon steps did not install. So each profile is
# checked before anything starts: every missing piece is named with the command that
# installs it, in one message.

CONTROL_MSGS_APT = CONTROL_MSGS.apt
NAV2_MSGS_APT = NAV2_MSGS.apt


@dataclass(frozen=True)
class Need:
    """One thing a profile's node (or its launch file) needs, and whether it is here."""

    node: str
    what: str
    ok: bool
    detail: str
    install: str = ""


def _pip() -> str:
    """How to run pip for the interpreter that runs cowp_ros.

    Ubuntu's system Python (a colcon install on Kilted's Ubuntu 24.04) is marked
    externally managed: pip refuses to install into it without the flag.
    """
    import sys
    import sysconfig
    from pathlib import Path

    managed = Path(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED").is_file()
    in_venv = sys.prefix != sys.base_prefix
    flag = " --break-system-packages" if managed and not in_venv else ""
    return f"{sys.executable} -m pip install{flag}"


def requirements_file(name: str) -> str:
    """requirements/NAME.txt of the cowp_ros checkout (not installed by colcon)."""
    from cowp_ros.resources import SOURCE_ROOT

    path = SOURCE_ROOT / "requirements" / f"{name}.txt"
    return str(path) if path.is_file() else f"<your cowp_ros checkout>/requirements/{name}.txt"


def perception_install() -> str:
    constraints = requirements_file("perception-constraints")
    return (
        f"{_pip()} -c {constraints} -r {requirements_file('perception')} && "
        "python3 -m cowp_ros.perception.provision provision"
    )


def llm_install() -> str:
    return (
        f"export OPENAI_BASE_URL=http://HOST:PORT/v1 OPENAI_MODEL=NAME OPENAI_API_KEY=KEY "
        f"(a server of your own), or: {_pip()} -r {requirements_file('llm')} && "
        "python3 -m cowp_ros.llm.model_store"
    )


def apt_name(package: str) -> str:
    return f"ros-kilted-{package.replace('_', '-')}"


def effective_parameters(spec) -> dict:  # spec: cowp_ros.bringup.spec.NodeSpec
    """A node's parameters as the profile starts it: its files, then the overrides."""
    import yaml

    values: dict = {}
    for path in spec.parameter_files:
        try:
            document = yaml.safe_load(path.read_text()) or {}
        except OSError:
            continue
        for key in (spec.name, f"/{spec.name}", "/**"):
            section = document.get(key) or {}
            values.update(section.get("ros__parameters") or {})
    values.update(spec.parameters)
    return values


def _module(node: str, what: str, module: str, install: str) -> Need:
    found = importlib.util.find_spec(module) is not None
    detail = f"{module} installed" if found else f"{module} is not installed"
    return Need(node, what, found, detail, "" if found else install)


def _llm_need(node: str, parameters: dict) -> Need:
    what = "a language model (OpenAI-compatible server or the embedded one)"
    url = parameters.get("llm_url") or os.environ.get("OPENAI_BASE_URL", "")
    if url:
        return Need(node, what, True, f"server {url}")
    if importlib.util.find_spec("xllamacpp") is None:
        return Need(
            node,
            what,
            False,
            "no OPENAI_BASE_URL and the embedded runtime (xllamacpp) is not installed",
            llm_install(),
        )
    try:
        from cowp_ros.llm.model_store import resolve_model

        model = resolve_model(parameters.get("embedded_model_path") or None)
    except Exception as err:  # an unknown model name: the finding
        return Need(node, what, False, str(err), llm_install())
    if not model.path.is_file():
        return Need(node, what, False, f"no model file at {model.path}", llm_install())
    return Need(node, what, True, f"embedded model {model.path}")


def _detector_needs(node: str, parameters: dict) -> list[Need]:
    needs = [
        _module(node, "numpy", "numpy", perception_install()),
        _module(node, "OpenCV (cv2)", "cv2", perception_install()),
    ]
    backend = str(parameters.get("backend", "ultralytics"))
    needs.append(_module(node, f"the {backend} detector backend", backend, perception_install()))
    try:
        from cowp_ros.perception.models import resolve_model

        path = resolve_model(str(parameters.get("model", "")))
        needs.append(Need(node, "a detection model", True, str(path)))
    except CowpError as err:
        needs.append(Need(node, "a detection model", False, err.message, perception_install()))
    return needs


def _executor_needs(node: str, parameters: dict) -> list[Need]:
    from cowp_ros.skills.backends import requirements, resolve_choice

    try:
        choice = resolve_choice(
            str(parameters.get("profile", "sim")),
            str(parameters.get("base_backend", "auto")),
            str(parameters.get("arm_backend", "auto")),
            str(parameters.get("gripper_backend", "auto")),
        )
    except CowpError as err:
        return [Need(node, "valid backend parameters", False, err.message)]
    return [
        _module(
            node,
            needed.what,
            needed.requirement.module,
            f"sudo apt install {needed.requirement.apt}",
        )
        for needed in requirements(choice)
    ]


def _ros_package_need(node: str, package: str) -> Need:
    what = f"ROS package {package}"
    try:
        from ament_index_python.packages import get_package_share_directory

        return Need(node, what, True, get_package_share_directory(package))
    except ImportError:
        return Need(
            node,
            what,
            False,
            "no ROS 2 installation is sourced",
            "source /opt/ros/kilted/setup.bash",
        )
    except Exception:  # PackageNotFoundError (a LookupError) or a broken index
        return Need(node, what, False, "not installed", f"sudo apt install {apt_name(package)}")


def _physics_needs(node: str, parameters: dict) -> list[Need]:
    """MuJoCo from PyPI; the actions and TF it serves (built by make setup, or apt)."""
    needs = [_module(node, "MuJoCo (the physics)", "mujoco", f"{_pip()} mujoco")]
    for package in ("control_msgs", "nav2_msgs", "tf2_msgs"):
        needs.append(
            _module(
                node,
                f"{package} (what it serves)",
                package,
                f"sudo apt install {apt_name(package)}",
            )
        )
    return needs


NODE_NEEDS = {
    "physics_world": _physics_needs,
    "commonsense": lambda node, parameters: [_llm_need(node, parameters)],
    "situation_detector": _detector_needs,
    "executor": _executor_needs,
    "planner": lambda node, parameters: (
        [_module(node, "Fast Downward", "up_fast_downward", f"{_pip()} up-fast-downward")]
        if parameters.get("planner") == "fast_downward"
        else []
    ),
}


def launch_packages(profile_name: str, spec_path=None) -> list[str]:
    """ROS packages a profile's launch file starts besides our nodes (bringup.yaml's
    launch_packages; cowp bringup leaves those to the user)."""
    import yaml

    from cowp_ros.bringup.spec import default_spec_path

    document = yaml.safe_load((spec_path or default_spec_path()).read_text()) or {}
    entry = (document.get("profiles") or {}).get(profile_name) or {}
    return [str(p) for p in entry.get("launch_packages") or []]


def profile_needs(profile, *, with_launch: bool = False, spec_path=None) -> list[Need]:
    """Everything the nodes cowp_ros starts for `profile` need (and, with_launch, the
    ROS packages its launch file starts), checked without starting anything."""
    needs: list[Need] = []
    for spec in profile.nodes:
        if spec.external:
            continue
        check = NODE_NEEDS.get(spec.executable)
        if check is not None:
            needs.extend(check(spec.name, effective_parameters(spec)))
    if with_launch:
        for package in launch_packages(profile.name, spec_path):
            needs.append(_ros_package_need("launch file", package))
    return needs


def refusal(profile_name: str, missing: list[Need]) -> CowpError:
    """One message naming every missing piece and the command that installs it."""
    lines = [f"profile '{profile_name}' cannot start: {len(missing)} thing(s) missing"]
    apt: list[str] = []
    for need in missing:
        lines.append(f"  - {need.node} needs {need.what}: {need.detail}")
        if need.install:
            lines.append(f"      install: {need.install}")
        if need.install.startswith("sudo apt install "):
            apt += [p for p in need.install.split()[3:] if p not in apt]
    if len(apt) > 1:
        lines.append(f"  all the apt packages at once: sudo apt install {' '.join(apt)}")
        lines.append(
            "  (or, in a colcon workspace: rosdep install --from-paths src --ignore-src -y)"
        )
    return CowpError(
        "\n".join(lines), hint=f"then check again with: cowp doctor --profile {profile_name}"
    )


def check_profile(profile, *, with_launch: bool = False) -> None:
    """Raise the refusal when anything the profile needs is missing."""
    missing = [need for need in profile_needs(profile, with_launch=with_launch) if not need.ok]
    if missing:
        raise refusal(profile.name, missing)


def refuse_if_missing(context, *, with_launch: bool) -> list:
    """Launch files' first action: the profile check, before any node starts.

    `context` is the launch context (its `profile` and `overrides` arguments are read
    through launch's LaunchConfiguration); returns no actions, or raises the refusal,
    which `ros2 launch` prints as the reason it stopped.
    """
    from launch.substitutions import LaunchConfiguration

    from cowp_ros.bringup.spec import load_profile, with_parameter_overrides

    profile = load_profile(LaunchConfiguration("profile").perform(context))
    overrides = LaunchConfiguration("overrides").perform(context).split()
    check_profile(with_parameter_overrides(profile, overrides), with_launch=with_launch)
    return []
