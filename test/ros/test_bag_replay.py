"""`replay_bag` says where its messages went: every one reaches a subscriber that
joined late, and a topic nobody listens to is named rather than reported as sent.
In process: the replaying node and a listener, each in its own context."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from cowp_ros.ros.bags import replay_bag, replay_live, typestore, write_bag

pytestmark = [pytest.mark.ros]

TEXTS = ["first", "second", "third"]


@pytest.fixture
def topic() -> str:
    return f"/replay_test_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def bag(tmp_path: Path, topic: str) -> Path:
    store = typestore(packages=())
    string = store.types["std_msgs/msg/String"]
    start = 1_700_000_000 * 1_000_000_000
    return write_bag(
        tmp_path / "texts",
        (
            (topic, "std_msgs/msg/String", start + i * 1000, string(data=t))
            for i, t in enumerate(TEXTS)
        ),
        store,
    )


@pytest.fixture
def replayer(lone_node: Callable[[str], Node]) -> Node:
    return lone_node("bag_replayer")


def test_every_message_reaches_the_subscriber(bag: Path, topic: str) -> None:
    context = rclpy.Context()
    rclpy.init(context=context)
    listener = Node("bag_listener", context=context)
    received: list[str] = []
    all_received = threading.Event()

    def on_text(message: String) -> None:
        received.append(message.data)
        if len(received) == len(TEXTS):
            all_received.set()

    listener.create_subscription(String, topic, on_text, 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(listener)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        # As `cowp replay` does: its own context, shut down as soon as the replay returns.
        report = replay_live(
            bag, topics=None, rate=1.0, subscriber_timeout_s=30.0, stop=threading.Event()
        )
        # Acknowledged means held by the listener's subscription; its callbacks follow.
        all_received.wait(10.0)
    finally:
        executor.shutdown()
        listener.destroy_node()
        rclpy.try_shutdown(context=context)
        spinning.join(5.0)
    assert report.published == len(TEXTS)
    assert report.delivered, report
    assert received == TEXTS


def test_a_topic_nobody_listens_to_is_named(replayer: Node, bag: Path, topic: str) -> None:
    report = replay_bag(replayer, bag, subscriber_timeout_s=0.2)
    assert report.published == len(TEXTS)
    assert report.unheard == (topic,)
    assert not report.delivered
