"""Where control_msgs, nav2_msgs and tf2_msgs come from: a ROS install or this workspace.

The robot backends import three upstream interface packages that neither PyPI nor
Debian provides: control_msgs (FollowJointTrajectory, ParallelGripperCommand,
GripperCommand), nav2_msgs (NavigateToPose) and tf2_msgs (TFMessage). Where no ROS
install provides them, `make setup` builds the part cowp_ros uses from
`upstream_interfaces/` (written from docs/kilted_interfaces.md) into the venv; on a ROS
install the real package wins and nothing is built. Both import under the same name, so
a run that behaves differently on the robot than here starts with the question this
module answers: which one did Python import, and from where.

A stand-in says so in its package.xml (`<cowp_ros_stand_in>` under `<export>`), which is
installed beside it as share/<package>/package.xml; a path alone cannot tell them apart
(a real package can be built into a venv too).

This module needs nothing but the standard library and the packages it looks at, so
scripts/setup.sh runs it as a script, before cowp_ros is installed:
`python -P cowp_ros/ros/interface_origin.py --porcelain` prints `<package> <origin>
<loads|fails|->` per line (setup builds those whose origin is not `ros`); without
options it prints one sentence per package, with the path.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# package -> (interface kind, one type of it): what setup's step builds and the backends use.
PROBES: dict[str, tuple[str, str]] = {
    "control_msgs": ("action", "FollowJointTrajectory"),
    "nav2_msgs": ("action", "NavigateToPose"),
    "tf2_msgs": ("msg", "TFMessage"),
}
STAND_IN_TAG = "cowp_ros_stand_in"
# How far above the imported package folder its install prefix may be: lib/pythonX.Y/
# site-packages/<package> (3), local/lib/pythonX.Y/dist-packages/<package> (4).
_PREFIX_DEPTH = 5

Origin = Literal["workspace", "ros", "missing"]


@dataclass(frozen=True)
class InterfaceOrigin:
    """What `import <package>.<kind>` gives, and whose build it is.

    origin: "workspace" for this workspace's stand-in (upstream_interfaces/), "ros" for a
    ROS install's real package, "missing" when the import fails. path: the imported
    package folder. manifest: the share/<package>/package.xml installed with it, when
    found. loads: whether the probed type's C type support loads, which an import alone
    does not show (a real package built for another Python imports, then fails at the
    first publisher or client).
    """

    package: str
    origin: Origin
    path: Path | None = None
    manifest: Path | None = None
    loads: bool = False
    detail: str = ""

    @property
    def is_workspace_build(self) -> bool:
        return self.origin == "workspace"

    @property
    def in_venv(self) -> bool:
        """Whether the imported package lies under this interpreter's prefix (the venv)."""
        return self.path is not None and self.path.is_relative_to(Path(sys.prefix).resolve())

    def describe(self) -> str:
        if self.origin == "missing":
            return f"{self.package}: missing ({self.detail})"
        whose = {
            "workspace": "this workspace's stand-in (upstream_interfaces/)",
            "ros": "a ROS install's package",
        }[self.origin]
        loads = "" if self.loads else f"; its type support does not load ({self.detail})"
        return f"{self.package}: {whose} at {self.path}{loads}"


def find_manifest(package: str, package_dir: Path) -> Path | None:
    """share/<package>/package.xml of the install prefix that holds `package_dir`."""
    for prefix in list(package_dir.parents)[:_PREFIX_DEPTH]:
        manifest = prefix / "share" / package / "package.xml"
        if manifest.is_file():
            return manifest
    return None


def is_stand_in(manifest: Path) -> bool:
    """Whether this package.xml is one of upstream_interfaces/'s (its export says so)."""
    try:
        root = ElementTree.parse(manifest).getroot()
    except (OSError, ElementTree.ParseError):
        return False
    return root.find(f"export/{STAND_IN_TAG}") is not None


def _type_support_loads(interface: type) -> tuple[bool, str]:
    """Load the type's C type support as rclpy does before its first use.

    The generated `__import_type_support__` logs an ImportError at debug level and
    leaves `_TYPE_SUPPORT` unset, so the attribute is what tells.
    """
    meta = type(interface)
    if getattr(meta, "_TYPE_SUPPORT", None) is None:
        try:
            meta.__import_type_support__()  # type: ignore[attr-defined]
        except Exception as err:  # a broken library raises more than ImportError
            return False, f"{type(err).__name__}: {err}"
    if getattr(meta, "_TYPE_SUPPORT", None) is None:
        return False, f"no type support for {interface.__name__} loads in this Python"
    return True, ""


def interface_origin(package: str) -> InterfaceOrigin:
    """Import `<package>.<kind>` as any node would and say whose build it is."""
    kind, name = PROBES[package]
    try:
        module = importlib.import_module(f"{package}.{kind}")
        interface = getattr(module, name)
    except (ImportError, AttributeError) as err:
        return InterfaceOrigin(package, "missing", detail=f"import {package}.{kind}: {err}")
    package_dir = Path(module.__file__ or "").resolve().parent.parent
    manifest = find_manifest(package, package_dir)
    origin: Origin = "workspace" if manifest and is_stand_in(manifest) else "ros"
    loads, why = _type_support_loads(interface)
    return InterfaceOrigin(package, origin, package_dir, manifest, loads, why)


def interface_origins() -> list[InterfaceOrigin]:
    """One answer per package of PROBES, in its order."""
    return [interface_origin(package) for package in PROBES]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--porcelain",
        action="store_true",
        help="print '<package> <origin> <type support>' per line (origin: workspace, ros or "
        "missing; type support: loads, fails, or - when missing)",
    )
    args = parser.parse_args(argv)
    for found in interface_origins():
        if args.porcelain:
            loads = "-" if found.origin == "missing" else "loads" if found.loads else "fails"
            print(f"{found.package} {found.origin} {loads}")
        else:
            print(found.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
