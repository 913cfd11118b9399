"""`cowp task situation`'s verb: the situation reaches a subscriber in another program
before the verb returns (it waits for the subscriber's acknowledgement, not for a
guessed moment), and the verb fails with the fix when nobody listens."""

from __future__ import annotations

import time

import pytest
from rclpy.executors import SingleThreadedExecutor

from cowp_interfaces.msg import Situation
from cowp_ros.errors import CowpError
from cowp_ros.ros.clients.graph_verbs import publish_situation
from cowp_ros.ros.names import SITUATIONS_TOPIC

pytestmark = pytest.mark.ros


def test_the_situation_has_arrived_when_the_verb_returns(lone_node) -> None:
    listener = lone_node("situation_listener")
    heard: list[Situation] = []
    listener.create_subscription(Situation, SITUATIONS_TOPIC, heard.append, 10)
    publish_situation(
        "the cup is dirty", about="cup_1", source="person", confidence=0.9, wait_s=30.0
    )
    # The verb's node is gone; the message waits in the listener's reader.
    executor = SingleThreadedExecutor(context=listener.context)
    executor.add_node(listener)
    deadline = time.monotonic() + 10.0
    while not heard and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    assert [(m.text, m.object, m.source) for m in heard] == [
        ("the cup is dirty", "cup_1", "person")
    ]


def test_nobody_listening_is_an_error_that_says_so() -> None:
    with pytest.raises(CowpError, match="nobody listens on /cowp/situations after 1 s"):
        publish_situation("the cup is dirty", about="", source="person", confidence=1.0, wait_s=1.0)
