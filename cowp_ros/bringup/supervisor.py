"""Start a profile's nodes as separate processes, wait until they serve, watch them.

This is what `ros2 launch` does for a user with a full ROS 2 install, done with the
standard library so it also works from the PyPI wheels (launch and launch_ros are not
on PyPI). Each node is its own process in its own session, so a Ctrl-C in the terminal
reaches the supervisor alone, which then forwards SIGINT to every node and waits for
them to finish cleanly (escalating to SIGTERM, then SIGKILL). A node that dies is
reported with its exit code and the end of its log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from cowp_ros.bringup.liveliness import liveliness_environment
from cowp_ros.bringup.node_secrets import keys_moved_out
from cowp_ros.bringup.spec import NodeSpec, Profile
from cowp_ros.errors import CowpError


@dataclass
class RunningNode:
    spec: NodeSpec
    process: subprocess.Popen[bytes]
    log_path: Path
    started_at: float

    def exit_code(self) -> int | None:
        return self.process.poll()

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass(frozen=True)
class DeadNode:
    name: str
    exit_code: int
    log_path: Path
    log_tail: str

    def describe(self) -> str:
        return (
            f"node '{self.name}' died with exit code {self.exit_code} "
            f"(log: {self.log_path})\n{self.log_tail}"
        )


def node_command(spec: NodeSpec, override_file: Path | None) -> list[str]:
    """The command line of one node: our own nodes run as modules of this interpreter."""
    if spec.package == "cowp_ros":
        program = [sys.executable, "-m", f"cowp_ros.ros.nodes.{spec.executable}"]
    else:
        program = [str(_installed_executable(spec))]
    return [*spec.prefix(), *program, *spec.ros_arguments(override_file)]


def _installed_executable(spec: NodeSpec) -> Path:
    """lib/<package>/<executable> of an installed ROS package, as `ros2 run` finds it."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix

        prefix = Path(get_package_prefix(spec.package))
    except (ImportError, PackageNotFoundError) as err:
        raise CowpError(
            f"node '{spec.name}' needs the ROS package '{spec.package}', which is not installed",
            hint=f"install it (apt: ros-kilted-{spec.package.replace('_', '-')}) and source "
            "/opt/ros/kilted/setup.bash, or use a profile without it",
        ) from err
    executable = prefix / "lib" / spec.package / spec.executable
    if not executable.exists():
        raise CowpError(f"package '{spec.package}' has no executable '{spec.executable}'")
    return executable


class Supervisor:
    """Owns the node processes of one profile, from start to a clean shutdown."""

    def __init__(
        self,
        profile: Profile,
        log_dir: Path,
        *,
        environment: dict[str, str] | None = None,
        node_environment: dict[str, dict[str, str]] | None = None,
        say: Callable[[str], None] = print,
    ) -> None:
        # A key in a URL parameter moves into that node's environment (node_secrets.py).
        profile, moved = keys_moved_out(profile)
        self.profile = profile
        self.log_dir = log_dir
        self.environment = {**os.environ, **profile.environment, **(environment or {})}
        self.environment.update(liveliness_environment(self.environment))  # dead in 3 s
        self.node_environment = {
            name: {**moved.get(name, {}), **(node_environment or {}).get(name, {})}
            for name in {*moved, *(node_environment or {})}
        }
        """Per node, variables only that node's process gets (its model server's key)."""
        self.say = say
        self.nodes: dict[str, RunningNode] = {}
        self._override_dir = tempfile.TemporaryDirectory(prefix="cowp_bringup_")

    # ----------------------------------------------------------------------- start
    def start(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for spec in self.profile.nodes:
            if spec.external:
                continue
            override = self._write_overrides(spec)
            command = node_command(spec, override)
            log_path = self.log_dir / f"{spec.name}.log"
            log = log_path.open("wb")
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**self.environment, **self.node_environment.get(spec.name, {})},
                start_new_session=True,  # Ctrl-C reaches us; we forward it
            )
            log.close()
            self.nodes[spec.name] = RunningNode(spec, process, log_path, time.monotonic())
            self.say(f"started {spec.name} (pid {process.pid}, log {log_path})")

    def _write_overrides(self, spec: NodeSpec) -> Path | None:
        if not spec.parameters:
            return None
        path = Path(self._override_dir.name) / f"{spec.name}.yaml"
        path.write_text(yaml.safe_dump(spec.override_document()))
        return path

    # ----------------------------------------------------------------------- ready
    def wait_ready(self, timeout_s: float = 60.0) -> float:
        """Block until every node's `ready` entity is in the graph; seconds it took.

        Raises CowpError naming the nodes that are not ready, or the first that died.
        """
        import rclpy
        from rclpy.node import Node

        start = time.monotonic()
        pending = {spec.name: spec for spec in self.profile.nodes if spec.ready is not None}
        context = rclpy.Context()
        rclpy.init(context=context)
        try:
            probe = Node("cowp_bringup_probe", context=context)
            while pending:
                dead = self.dead_nodes()
                if dead:
                    raise CowpError(dead[0].describe())
                for name in [n for n, spec in pending.items() if _is_ready(probe, spec)]:
                    self.say(f"ready: {name} ({time.monotonic() - start:.1f} s)")
                    del pending[name]
                if pending and time.monotonic() - start > timeout_s:
                    missing = ", ".join(
                        f"{name} (waiting for {spec.ready.kind} {spec.ready.name})"  # type: ignore[union-attr]
                        for name, spec in pending.items()
                    )
                    raise CowpError(
                        f"not ready after {timeout_s:.0f} s: {missing}",
                        hint=f"see the node logs in {self.log_dir}",
                    )
                time.sleep(0.2)
            probe.destroy_node()
        finally:
            rclpy.try_shutdown(context=context)
        return time.monotonic() - start

    # --------------------------------------------------------------------- watch
    def dead_nodes(self) -> list[DeadNode]:
        return [
            DeadNode(name, code, node.log_path, node.log_tail())
            for name, node in self.nodes.items()
            if (code := node.exit_code()) is not None
        ]

    def watch(self, should_stop: Callable[[], bool], poll_s: float = 0.5) -> DeadNode | None:
        """Return when `should_stop()` says so (None) or a node dies (that node)."""
        while not should_stop():
            dead = self.dead_nodes()
            if dead:
                return dead[0]
            time.sleep(poll_s)
        return None

    # ---------------------------------------------------------------------- stop
    def stop(self, grace_s: float = 10.0) -> dict[str, int]:
        """SIGINT every node, then SIGTERM, then SIGKILL; returns the exit codes."""
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0)):
            alive = [n for n in self.nodes.values() if n.exit_code() is None]
            for node in alive:
                _signal_group(node.process, sig)
            deadline = time.monotonic() + wait_s
            while any(n.exit_code() is None for n in alive) and time.monotonic() < deadline:
                time.sleep(0.1)
        for node in self.nodes.values():
            if node.exit_code() is None:
                _signal_group(node.process, signal.SIGKILL)
                node.process.wait(timeout=5)
        self._override_dir.cleanup()
        return {name: node.process.returncode for name, node in self.nodes.items()}

    def __enter__(self) -> Supervisor:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, sig)


def _is_ready(probe, spec: NodeSpec) -> bool:
    """Whether the node's declared service, action server or publisher is visible."""
    from rclpy.action import get_action_names_and_types

    ready = spec.ready
    assert ready is not None
    if ready.kind == "service":
        return any(name == ready.name for name, _ in probe.get_service_names_and_types())
    if ready.kind == "action":
        return any(name == ready.name for name, _ in get_action_names_and_types(probe))
    return probe.count_publishers(ready.name) > 0
