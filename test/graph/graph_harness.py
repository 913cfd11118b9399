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

import yaml

from cowp_ros.bringup.spec import Profile, load_profile, with_parameter_overrides
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.ros.own_node import OwnNode

TROUBLE = ("WARN", "ERROR", "Traceback", "failed to send", "Failed to send")
"""Words of a node log line that a failed graph test quotes."""


def partial_profile(
    names: list[str], overrides: list[str] | None = None, base: str = "sim"
) -> Profile:
    """The `base` profile restricted to some of its nodes (a smaller graph for a test)."""
    profile = with_parameter_overrides(load_profile(base), overrides or [])
    return replace(profile, nodes=tuple(n for n in profile.nodes if n.name in names))


class Probe:
    """A node in the test process: subscribe, call, wait, with deadlines everywhere."""

    def __init__(self) -> None:
        self.own = OwnNode("graph_test_probe")
        self.node = self.own.node
        self.executor = self.own.executor
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
        assert self.own.spin_until(condition, timeout_s), (
            f"timed out after {timeout_s} s waiting for {what}"
        )

    def wait_future(self, future, timeout_s: float, what: str):
        self.spin_until(future.done, timeout_s, what)
        return future.result()

    def close(self) -> None:
        self.own.close()


def scenario_file(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    """A scenario written for one test (the shipped ones stay the demo's)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def node_log_trouble(logs: Path, tail: int = 12) -> str:
    """The warnings and errors of every node log under `logs` and the task manager's
    last lines: what a failed wait quotes, so that a failure in CI says why."""
    said: list[str] = []
    for log in sorted(logs.glob("*.log")):
        lines = log.read_text(errors="replace").splitlines()
        trouble = [line for line in lines if any(word in line for word in TROUBLE)]
        if log.stem == "task_manager":
            trouble = list(dict.fromkeys(trouble + lines[-tail:]))
        said += [f"  {log.stem}: {line[:300]}" for line in trouble[-tail:]]
    return "\n".join(said) or "  (the node logs say nothing wrong)"


def wait_until_executing(client: TaskClient, timeout_s: float, logs: Path) -> None:
    """Wait until the task manager reports the run's first step in its feedback.

    The feedback reaches the goal's own client, so nothing here depends on a topic
    subscription of the test matching in time. A run that ends first, or no step by
    the deadline, fails at once with what the task manager said and its nodes logged.
    """
    deadline = time.monotonic() + timeout_s
    while not any(f.phase == "executing" for f in client.all_feedback):
        said = "; ".join(f"[{f.phase}] {f.last_event}" for f in client.all_feedback)
        if client.is_task_complete():
            result = client.get_result()
            raise AssertionError(
                f"the task ended before its first step ({result.outcome.value}: "
                f"{result.explanation}); it said: {said or 'nothing'}\n{node_log_trouble(logs)}"
            )
        assert time.monotonic() < deadline, (
            f"no step within {timeout_s} s; the task manager said: {said or 'nothing'}\n"
            f"{node_log_trouble(logs)}"
        )
