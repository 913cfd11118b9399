"""OwnNode: a node in a context of its own, made and closed in the order rclpy needs."""

from __future__ import annotations

from typing import Any

import pytest
import rclpy
from rclpy.action import ActionClient
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from std_msgs.msg import String

from cowp_interfaces.action import RunTask
from cowp_ros.ros import own_node
from cowp_ros.ros.own_node import OwnNode

pytestmark = pytest.mark.ros


def test_close_shuts_the_executor_down_before_it_destroys_the_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wait a spin_once leaves half-done must be dropped by the executor, not finished
    later by the garbage collector on a destroyed node's handles."""
    own = OwnNode("own_node_order")
    own.spin_until(lambda: False, 0.1)  # leaves rclpy's wait half-done, as a client does
    seen: list[bool] = []
    destroy = Node.destroy_node

    def destroy_node(node: Node) -> None:
        seen.append(own.executor._is_shutdown)
        destroy(node)

    monkeypatch.setattr(Node, "destroy_node", destroy_node)
    own.close()
    assert seen == [True]
    assert not own.context.ok()
    own.close()  # a second close does nothing
    assert seen == [True]


def test_spin_until_says_whether_the_condition_came_in_time() -> None:
    with OwnNode("own_node_wait") as own:
        heard: list[str] = []
        own.node.create_subscription(String, "/own_node_test", lambda m: heard.append(m.data), 10)
        publisher = own.node.create_publisher(String, "/own_node_test", 10)
        own.node.create_timer(0.05, lambda: publisher.publish(String(data="here")))
        assert own.spin_until(lambda: bool(heard), timeout_s=30.0)
        assert not own.spin_until(lambda: False, timeout_s=0.2)
    assert not own.context.ok()


def test_a_background_spin_ends_with_close() -> None:
    own = OwnNode("own_node_background")
    client: ActionClient[Any, Any, Any] = ActionClient(own.node, RunTask, "/own_node_test_task")
    own.spin_in_background()
    thread = own._thread
    assert thread is not None and thread.is_alive()
    assert not client.server_is_ready()
    own.close()
    assert not thread.is_alive()
    assert not own.context.ok()


def test_a_node_that_cannot_be_made_leaves_no_context_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shut: list[object] = []
    try_shutdown = rclpy.try_shutdown

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("node name refused")

    def record(*, context: Any) -> None:
        shut.append(context)
        try_shutdown(context=context)

    monkeypatch.setattr(own_node, "Node", refuse)
    monkeypatch.setattr(rclpy, "try_shutdown", record)
    with pytest.raises(RuntimeError, match="node name refused"):
        OwnNode("own_node_refused")
    assert len(shut) == 1 and not shut[0].ok()  # type: ignore[attr-defined]


def test_close_destroys_the_action_clients_the_node_leaves() -> None:
    """Node.destroy_node leaves an ActionClient's DDS entities to the garbage collector,
    which may run them down on any thread, holding the GIL, while DDS threads hold their
    own locks; close destroys them on its own thread."""
    own = OwnNode("own_node_action_client")
    client: ActionClient[Any, Any, Any] = ActionClient(own.node, RunTask, "/own_node_test_run")
    own.close()
    assert list(own.node.waitables) == []
    with pytest.raises(InvalidHandle), client._client_handle:
        pass
