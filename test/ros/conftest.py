"""Fixtures of the in-process ROS tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import rclpy
from rclpy.node import Node


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
