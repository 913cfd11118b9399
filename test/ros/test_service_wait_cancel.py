"""A service call's wait for the service to appear ends on cancel, not only its wait for
the answer: a run canceled while a node it calls is still starting stops at once."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from rcl_interfaces.srv import GetParameters
from rclpy.node import Node

from cowp_ros.cowp.cancel import RunCancelledError
from cowp_ros.errors import CowpError
from cowp_ros.ros.waiting import call_service

pytestmark = pytest.mark.ros

NOBODY = "/nobody_serves_this/get_parameters"


@pytest.fixture
def node(lone_node: Callable[[str], Node]) -> Node:
    return lone_node("service_wait_cancel")


def test_a_cancel_ends_the_wait_for_a_service_that_is_not_there(node: Node) -> None:
    client = node.create_client(GetParameters, NOBODY)
    canceled = threading.Event()
    canceled.set()
    with pytest.raises(RunCancelledError, match="canceled while waiting for"):
        call_service(
            client, GetParameters.Request(), timeout_s=30.0, what="a test call", cancel=canceled
        )


def test_a_service_that_never_appears_is_named(node: Node) -> None:
    client = node.create_client(GetParameters, NOBODY)
    with pytest.raises(CowpError, match=f"a test call: service {NOBODY} is not available"):
        call_service(
            client,
            GetParameters.Request(),
            timeout_s=0.3,
            what="a test call",
            cancel=threading.Event(),
        )
