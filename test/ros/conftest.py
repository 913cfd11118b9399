"""Fixtures of the in-process ROS tests."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import rclpy
from rclpy.action import ActionServer
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.action import RunTask


@pytest.fixture
def lone_node() -> Iterator[Callable[[str], Node]]:
    """Makes nodes, each in a context of its own (as a separate program would have),
    destroyed and their contexts shut down when the test ends."""
    made: list[tuple[Node, rclpy.Context]] = []

    def make(name: str) -> Node:
        context = rclpy.Context()
        rclpy.init(context=context)
        node = Node(name, context=context)
        made.append((node, context))
        return node

    yield make
    for node, context in reversed(made):
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def run_task_server() -> Iterator[Callable[..., Any]]:
    """Starts action servers, RunTask unless `action_type` says otherwise:
    `run_task_server(ServerClass, action, execute, **kwargs)` makes one on a node of its
    own context, spun by a MultiThreadedExecutor on a thread of its own (as the task
    manager is), and returns it; each is stopped and destroyed when the test ends."""
    made: list[tuple[ActionServer, Node, rclpy.Context, Any, threading.Thread]] = []

    def start(
        server_class: type[ActionServer],
        action: str,
        execute: Callable[[Any], Any],
        action_type: Any = RunTask,
        **kwargs: Any,
    ) -> Any:
        context = rclpy.Context()
        rclpy.init(context=context)
        node = Node(f"run_task_server_{len(made)}", context=context)
        server = server_class(node, action_type, action, execute_callback=execute, **kwargs)
        executor = MultiThreadedExecutor(context=context)
        executor.add_node(node)
        spinning = threading.Thread(target=executor.spin, daemon=True)
        spinning.start()
        made.append((server, node, context, executor, spinning))
        return server

    yield start
    for server, node, context, executor, spinning in reversed(made):
        executor.shutdown(timeout_sec=2.0)
        spinning.join(5.0)
        server.destroy()
        node.destroy_node()
        rclpy.shutdown(context=context)
