"""The robot backends the executor can drive, each declared once: its name, the part it
drives, what it needs installed and what it waits for at start-up.

The declarations are ROS-free on purpose: `cowp doctor` and `cowp bringup` must say what
a profile is missing on a machine where ROS itself may be missing, and the executor node
must choose the same backends the doctor checked. The ROS side
(`cowp_ros.ros.skill_backends`) registers one builder per declared name; a test holds
the two lists equal.

`auto` is a list per profile and part, tried in order: the first backend whose
requirements are installed is chosen, and the last one is chosen even when its
requirements are missing, so that the executor fails at start-up naming the package
(the robot's base is always Nav2: a robot that silently drove by another backend would
be worse than one that refuses).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cowp_ros.errors import CowpError

Part = Literal["base", "arm", "gripper"]
PARTS: tuple[Part, ...] = ("base", "arm", "gripper")
PROFILES = ("sim", "gazebo", "robot")


@dataclass(frozen=True)
class Requirement:
    """A Python module a backend imports, and the Debian package that installs it."""

    module: str
    apt: str
    kind: str = ""
    """What the module gives the backend, as the doctor says it ("action")."""


CONTROL_MSGS = Requirement("control_msgs", "ros-kilted-control-msgs", "action")
NAV2_MSGS = Requirement("nav2_msgs", "ros-kilted-nav2-msgs")
TF2_MSGS = Requirement("tf2_msgs", "ros-kilted-tf2-msgs")


@dataclass(frozen=True)
class BackendInfo:
    """One backend as the executor's parameter names it."""

    part: Part
    name: str
    summary: str
    title: str = ""
    """How the doctor names it beside its requirement ("arm", "Nav2 base")."""
    requires: tuple[Requirement, ...] = ()
    waits_for: str = ""
    """What it checks at start-up or first use (a server, a subscriber)."""


_REGISTRY: dict[tuple[Part, str], BackendInfo] = {}
_AUTO: dict[tuple[str, Part], tuple[str, ...]] = {}


def register(info: BackendInfo) -> BackendInfo:
    """Declare a backend (a second declaration of the same part and name is a bug)."""
    key = (info.part, info.name)
    if key in _REGISTRY or info.name == "auto":
        raise ValueError(f"backend {info.part}/{info.name} is declared twice or reserved")
    _REGISTRY[key] = info
    return info


def set_auto(profile: str, part: Part, *names: str) -> None:
    """What `auto` becomes for `part` on `profile`: the first of `names` installed."""
    for name in names:
        declared(part, name)
    _AUTO[(profile, part)] = names


def declared(part: Part, name: str) -> BackendInfo:
    """The declaration of a backend; KeyError when there is none."""
    return _REGISTRY[(part, name)]


def all_backends() -> list[BackendInfo]:
    return list(_REGISTRY.values())


def choices(part: Part) -> tuple[str, ...]:
    """The values the executor's `<part>_backend` parameter takes, `auto` first."""
    return ("auto", *(info.name for info in _REGISTRY.values() if info.part == part))


def module_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def installed(info: BackendInfo, is_installed: Callable[[str], bool] = module_installed) -> bool:
    return all(is_installed(requirement.module) for requirement in info.requires)


@dataclass(frozen=True)
class Choice:
    """The backend chosen for each part (never `auto`)."""

    base: str
    arm: str
    gripper: str

    def infos(self) -> list[BackendInfo]:
        return [declared(part, getattr(self, part)) for part in PARTS]


def check_choice(parameter: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise CowpError(f"parameter {parameter} is '{value}'; allowed values: {', '.join(allowed)}")
    return value


def resolve_choice(
    profile: str,
    base: str,
    arm: str,
    gripper: str,
    *,
    is_installed: Callable[[str], bool] = module_installed,
) -> Choice:
    """Validate the parameters and replace `auto` by the profile's backend."""
    check_choice("profile", profile, PROFILES)
    asked = {"base": base, "arm": arm, "gripper": gripper}
    chosen: dict[str, str] = {}
    for part in PARTS:
        value = check_choice(f"{part}_backend", asked[part], choices(part))
        if value == "auto":
            names = _AUTO[(profile, part)]
            value = next(
                (n for n in names if installed(declared(part, n), is_installed)), names[-1]
            )
        chosen[part] = value
    return Choice(**chosen)


@dataclass(frozen=True)
class Needed:
    """A requirement, and the chosen backends that need it."""

    requirement: Requirement
    backends: tuple[BackendInfo, ...]

    @property
    def what(self) -> str:
        """ "control_msgs (the arm and gripper action backend)"."""
        kind = f" {self.requirement.kind}" if self.requirement.kind else ""
        titles = " and ".join(info.title or info.name for info in self.backends)
        return f"{self.requirement.module} (the {titles}{kind} backend)"


def requirements(choice: Choice) -> list[Needed]:
    """Every requirement of the chosen backends, with the backends that need it, by
    module name (one stable order for messages and install lines)."""
    needed: dict[Requirement, list[BackendInfo]] = {}
    for info in choice.infos():
        for requirement in info.requires:
            needed.setdefault(requirement, []).append(info)
    return [
        Needed(requirement, tuple(infos))
        for requirement, infos in sorted(needed.items(), key=lambda item: item[0].module)
    ]


# --- the backends cowp_ros ships ------------------------------------------------------

register(
    BackendInfo(
        "base",
        "topic",
        "drives by a PoseStamped goal topic and odometry",
        waits_for="a subscriber on the goal topic",
    )
)
register(
    BackendInfo(
        "base",
        "nav2",
        "Nav2's NavigateToPose action; where the base stopped is read on /tf",
        title="Nav2 base",
        requires=(NAV2_MSGS, TF2_MSGS),
        waits_for="the navigate_to_pose action server",
    )
)
register(
    BackendInfo(
        "arm",
        "topic",
        "the trajectory controller's command topic, completion read on /joint_states",
        waits_for="a subscriber on the command topic",
    )
)
register(
    BackendInfo(
        "arm",
        "action",
        "FollowJointTrajectory of the trajectory controller",
        title="arm",
        requires=(CONTROL_MSGS,),
        waits_for="the follow_joint_trajectory action server",
    )
)
register(
    BackendInfo(
        "gripper",
        "topic",
        "the gripper's position command topic",
        waits_for="a subscriber on the command topic",
    )
)
register(
    BackendInfo(
        "gripper",
        "action",
        "ParallelGripperCommand (Kilted's parallel_gripper_action_controller)",
        title="gripper",
        requires=(CONTROL_MSGS,),
        waits_for="the gripper action server",
    )
)
register(
    BackendInfo(
        "gripper",
        "gripper_command",
        "the older GripperCommand action",
        title="gripper",
        requires=(CONTROL_MSGS,),
        waits_for="the gripper action server",
    )
)

for _part in PARTS:
    set_auto("sim", _part, "topic")
set_auto("gazebo", "base", "topic")
set_auto("robot", "base", "nav2")
for _profile in ("gazebo", "robot"):
    set_auto(_profile, "arm", "action", "topic")
    set_auto(_profile, "gripper", "action", "topic")


__all__ = [
    "CONTROL_MSGS",
    "NAV2_MSGS",
    "PARTS",
    "PROFILES",
    "BackendInfo",
    "Choice",
    "Needed",
    "Requirement",
    "all_backends",
    "check_choice",
    "choices",
    "declared",
    "register",
    "requirements",
    "resolve_choice",
    "set_auto",
]
