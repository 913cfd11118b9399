"""Helpers for graph tests: start real node processes through our own bring-up.

The shape of launch_testing (start, wait until ready, act, assert, shut down) with
`cowp_ros.bringup` doing the starting, since launch_testing is not installable here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import rclpy
import yaml
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from cowp_ros.bringup.spec import Profile, load_profile, with_parameter_overrides


def partial_profile(
    names: list[str], overrides: list[str] | None = None, base: str = "sim"
) -> Profile:
    """The `base` profile restricted to some of its nodes (a smaller graph for a test)."""
    profile = with_parameter_overrides(load_profile(base), overrides or [])
    return replace(profile, nodes=tuple(n for n in profile.nodes if n.name in names))


class Probe:
    """A node in the test process: subscribe, call, wait, with deadlines everywhere."""

    def __init__(self) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = Node("graph_test_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.received: dict[str, list[Any]] = {}
        self.subscriptions: dict[str, Any] = {}

    def listen(self, msg_type: type, topic: str) -> list[Any]:
        messages = self.received.setdefault(topic, [])
        self.subscriptions[topic] = self.node.create_subscription(
            msg_type, topic, messages.append, 50
        )
        return messages

    def wait_heard(self, topic: str, timeout_s: float = 30.0) -> None:
        """Wait until the subscription `listen` made on `topic` is matched with a
        publisher: a message published before that is lost (the topics are volatile),
        so a test that triggers a publication waits here first."""
        subscription = self.subscriptions[topic]
        self.spin_until(
            lambda: subscription.get_publisher_count() > 0, timeout_s, f"a publisher on {topic}"
        )

    def spin_until(self, condition: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
            self.executor.spin_once(timeout_sec=0.05)

    def wait_future(self, future, timeout_s: float, what: str):
        self.spin_until(future.done, timeout_s, what)
        return future.result()

    def close(self) -> None:
        self.executor.shutdown()  # as cowp_ros.ros.clients.graph_verbs does, and why
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def scenario_file(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    """A scenario written for one test (the shipped ones stay the demo's)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path
