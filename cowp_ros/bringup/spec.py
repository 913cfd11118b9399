"""The one node specification that `cowp bringup` and the launch files both read.

`config/bringup.yaml` says which nodes exist (package, executable, parameter files,
how to tell they are ready) and, per profile (sim, robot, gazebo, replay), which of
them run, with which parameter overrides and remappings. Keeping it as data, loaded
by this ROS-free module, means the launch files are a thin translation of something
the test suite exercises for real: `launch` and `launch_ros` cannot be installed here,
so nothing else about them can be tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.resources import share_path

READY_KINDS = ("service", "action", "topic")


@dataclass(frozen=True)
class ReadyWhen:
    """The graph entity whose appearance means the node is serving."""

    kind: str  # service | action | topic
    name: str


MAX_NICE = 19
"""The lowest CPU priority a node can be given (Linux's nice range, upwards from 0)."""


def nice_prefix(nice: int) -> list[str]:
    """The command prefix that runs a process at a CPU priority lowered by `nice`
    (nothing at 0)."""
    return ["nice", "-n", str(nice)] if nice else []


@dataclass(frozen=True)
class NodeSpec:
    """One node as a profile runs it: everything needed to start it as a process."""

    name: str
    package: str
    executable: str
    parameter_files: tuple[Path, ...]
    parameters: dict[str, Any]
    remappings: tuple[tuple[str, str], ...]
    ready: ReadyWhen | None
    external: bool  # started by someone else (drivers, Gazebo): checked, not started
    description: str = ""
    nice: int = 0  # CPU priority lowered by this much (0..19): work that may wait for others

    def prefix(self) -> list[str]:
        """What the node's command line starts with: `nice -n N` when it runs at a lower
        CPU priority, as launch_ros's `prefix` and the supervisor both prepend it."""
        return nice_prefix(self.nice)

    def ros_arguments(self, override_file: Path | None = None) -> list[str]:
        """`--ros-args` for the process, the same as launch_ros would pass."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        for path in self.parameter_files:
            args += ["--params-file", str(path)]
        if override_file is not None:
            args += ["--params-file", str(override_file)]
        for source, target in self.remappings:
            args += ["-r", f"{source}:={target}"]
        return args

    def override_document(self) -> dict[str, Any]:
        """The profile's parameter overrides as a ROS 2 parameter file document."""
        return {self.name: {"ros__parameters": dict(self.parameters)}}


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    nodes: tuple[NodeSpec, ...]
    use_sim_time: bool = False
    environment: dict[str, str] = field(default_factory=dict)

    def node(self, name: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise CowpError(f"profile '{self.name}' has no node '{name}'")


def default_spec_path() -> Path:
    return share_path("config", "bringup.yaml")


def load_profile(profile: str, spec_path: Path | None = None) -> Profile:
    """Read the spec and resolve one profile; every mistake is named with its place."""
    path = spec_path or default_spec_path()
    try:
        document = yaml.safe_load(path.read_text())
    except FileNotFoundError as err:
        raise CowpError(f"node specification not found: {path}") from err
    except yaml.YAMLError as err:
        raise CowpError(f"node specification {path} is not valid YAML: {err}") from err
    nodes = document.get("nodes") or {}
    profiles = document.get("profiles") or {}
    if profile not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise CowpError(f"unknown profile '{profile}' in {path}", hint=f"known profiles: {known}")
    entry = profiles[profile] or {}
    use_sim_time = bool(entry.get("use_sim_time", False))
    resolved = []
    for name in entry.get("nodes", []):
        if name not in nodes:
            raise CowpError(f"profile '{profile}' in {path} names an undefined node '{name}'")
        resolved.append(
            _node_spec(name, nodes[name], entry.get("overrides", {}).get(name, {}), use_sim_time)
        )
    return Profile(
        name=profile,
        description=str(entry.get("description", "")),
        nodes=tuple(resolved),
        use_sim_time=use_sim_time,
        environment={str(k): str(v) for k, v in (entry.get("environment") or {}).items()},
    )


def with_parameter_overrides(profile: Profile, assignments: list[str]) -> Profile:
    """Apply `NODE.PARAM=VALUE` strings (values parsed as YAML) to a profile's nodes."""
    nodes = {spec.name: spec for spec in profile.nodes}
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        node, dot, parameter = key.partition(".")
        if not sep or not dot or not parameter:
            raise CowpError(f"'{assignment}' is not NODE.PARAM=VALUE")
        if node not in nodes:
            raise CowpError(f"'{assignment}' names node '{node}', not in profile '{profile.name}'")
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError as err:
            raise CowpError(f"'{assignment}': the value is not valid YAML ({err})") from err
        spec = nodes[node]
        nodes[node] = replace(spec, parameters={**spec.parameters, parameter: parsed})
    return replace(profile, nodes=tuple(nodes[spec.name] for spec in profile.nodes))


def profile_names(spec_path: Path | None = None) -> list[str]:
    document = yaml.safe_load((spec_path or default_spec_path()).read_text())
    return sorted(document.get("profiles") or {})


def _node_spec(
    name: str, base: dict[str, Any], override: dict[str, Any], use_sim_time: bool
) -> NodeSpec:
    parameters = {**(base.get("parameters") or {}), **(override.get("parameters") or {})}
    if use_sim_time:
        parameters["use_sim_time"] = True
    remappings = {**(base.get("remappings") or {}), **(override.get("remappings") or {})}
    ready = base.get("ready")
    if ready is not None:
        kind, target = next(iter(ready.items()))
        if kind not in READY_KINDS:
            raise CowpError(f"node '{name}': ready must be one of {READY_KINDS}, not '{kind}'")
        ready = ReadyWhen(kind, str(target))
    files = [*(base.get("parameter_files") or []), *(override.get("parameter_files") or [])]
    nice = override.get("nice", base.get("nice", 0))
    if isinstance(nice, bool) or not isinstance(nice, int) or not 0 <= nice <= MAX_NICE:
        raise CowpError(
            f"node '{name}': nice must be a whole number from 0 to {MAX_NICE}, not {nice!r}",
            hint="0 runs the node at the usual priority; 10 lets the model server go first",
        )
    return NodeSpec(
        name=name,
        package=str(base.get("package", "cowp_ros")),
        executable=str(base.get("executable", name)),
        parameter_files=tuple(share_path(*Path(f).parts) for f in files),
        parameters=parameters,
        remappings=tuple(remappings.items()),
        ready=ready,
        external=bool(base.get("external", False)),
        description=str(base.get("description", "")),
        nice=nice,
    )
