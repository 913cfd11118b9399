"""`cowp record` hears what its publishers offer: a best-effort stream (a camera
driver's sensor-data QoS, which a reliable subscription never matches) and the
messages a transient-local publisher kept from before the recording began (the task
outcomes); the bag keeps the offered QoS, and `cowp replay` publishes with it, so a
transient-local subscriber (a task client) hears the replay. In process: each node in
its own context."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from cowp_ros.ros.bags import (
    BagRecorder,
    bag_qos,
    discover_types,
    offered_profiles,
    read_bag,
    recorded_qos,
    recording_qos,
    replay_bag,
    replay_qos,
)

pytestmark = [pytest.mark.ros]

STRING = "std_msgs/msg/String"
WITHIN_S = 20.0  # discovery and delivery on a loaded machine; each wait ends on its event


def _topic() -> str:
    return f"/record_qos_test_{uuid.uuid4().hex[:8]}"


def _discovered(recorder_node: Node, topic: str) -> dict[str, str]:
    types = discover_types(recorder_node, [topic], WITHIN_S)
    assert types == {topic: STRING}, f"the recorder never discovered {topic}"
    return types


def _spin_until(node: Node, done: Callable[[], bool]) -> None:
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + WITHIN_S
    try:
        while not done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.remove_node(node)
        executor.shutdown()


def test_a_best_effort_stream_is_recorded(lone_node: Callable[[str], Node], tmp_path: Path) -> None:
    topic = _topic()
    talker = lone_node("best_effort_talker")
    publisher = talker.create_publisher(
        String, topic, QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    )
    recorder_node = lone_node("qos_recorder")
    types = _discovered(recorder_node, topic)
    assert (
        recording_qos(offered_profiles(recorder_node, topic), 10).reliability
        == ReliabilityPolicy.BEST_EFFORT
    )
    recorder = BagRecorder(recorder_node, tmp_path / "bag", types)
    try:

        def heard() -> bool:
            publisher.publish(String(data="frame"))  # best effort: any one may be lost
            return recorder.counts[topic] > 0

        _spin_until(recorder_node, heard)
    finally:
        recorder.close()
    assert [r.topic for r in read_bag(tmp_path / "bag")][:1] == [topic]


def test_what_a_transient_local_publisher_kept_is_recorded(
    lone_node: Callable[[str], Node], tmp_path: Path
) -> None:
    topic = _topic()
    talker = lone_node("latched_talker")
    publisher = talker.create_publisher(
        String,
        topic,
        QoSProfile(
            depth=8,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        ),
    )
    publisher.publish(String(data="kept before the recording"))
    recorder_node = lone_node("qos_recorder")
    types = _discovered(recorder_node, topic)
    qos = recording_qos(offered_profiles(recorder_node, topic), 10)
    assert qos.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert qos.reliability == ReliabilityPolicy.RELIABLE
    recorder = BagRecorder(recorder_node, tmp_path / "bag", types)
    try:
        _spin_until(recorder_node, lambda: recorder.counts[topic] > 0)
    finally:
        recorder.close()
    records = list(read_bag(tmp_path / "bag"))
    assert len(records) == 1 and records[0].topic == topic


def test_a_topic_without_publishers_is_recorded_reliable_and_volatile(
    lone_node: Callable[[str], Node],
) -> None:
    qos = recording_qos(offered_profiles(lone_node("qos_recorder"), _topic()), 10)
    assert qos.reliability == ReliabilityPolicy.RELIABLE
    assert qos.durability == DurabilityPolicy.VOLATILE


def test_the_bag_keeps_the_offered_qos_and_the_replay_uses_it(
    lone_node: Callable[[str], Node], tmp_path: Path
) -> None:
    topic = _topic()
    latched = QoSProfile(
        depth=8, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    talker = lone_node("latched_talker")
    talker.create_publisher(String, topic, latched).publish(String(data="outcome"))
    recorder_node = lone_node("qos_recorder")
    recorder = BagRecorder(recorder_node, tmp_path / "bag", _discovered(recorder_node, topic))
    try:
        _spin_until(recorder_node, lambda: recorder.counts[topic] > 0)
    finally:
        recorder.close()
    stored = recorded_qos(tmp_path / "bag")[topic]
    assert stored and all(q.durability.name == "TRANSIENT_LOCAL" for q in stored)
    assert replay_qos(stored, 10).durability == DurabilityPolicy.TRANSIENT_LOCAL

    # a transient-local subscription never matches a volatile publisher: it hears the
    # replay only because the replay publishes as the recording's publisher did
    listener = lone_node("latched_listener")
    heard: list[str] = []
    listener.create_subscription(String, topic, lambda m: heard.append(m.data), latched)
    report = replay_bag(lone_node("qos_replayer"), tmp_path / "bag", subscriber_timeout_s=WITHIN_S)
    _spin_until(listener, lambda: "outcome" in heard)
    assert report.delivered and "outcome" in heard


def test_bag_qos_keeps_the_policies_replay_adapts_to() -> None:
    best_effort = bag_qos(QoSProfile(depth=3, reliability=ReliabilityPolicy.BEST_EFFORT))
    assert best_effort.depth == 3 and best_effort.reliability.name == "BEST_EFFORT"
    reliable = bag_qos(QoSProfile(depth=3, reliability=ReliabilityPolicy.RELIABLE))
    mixed = replay_qos([best_effort, reliable], 10)
    assert mixed.reliability == ReliabilityPolicy.BEST_EFFORT
    assert mixed.durability == DurabilityPolicy.VOLATILE
    assert replay_qos([], 10).reliability == ReliabilityPolicy.RELIABLE


def test_a_best_effort_publisher_found_after_the_recording_began_is_recorded(
    lone_node: Callable[[str], Node], tmp_path: Path
) -> None:
    """The recording subscribed reliable before anyone published; a camera driver with
    sensor-data QoS that comes later is matched once the recorder adapts."""
    topic = _topic()
    recorder_node = lone_node("qos_recorder")
    recorder = BagRecorder(recorder_node, tmp_path / "bag", {topic: STRING})
    talker = lone_node("late_best_effort_talker")
    publisher = talker.create_publisher(
        String, topic, QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    )
    adapted: list[str] = []
    try:

        def heard() -> bool:
            adapted.extend(recorder.adapt())
            publisher.publish(String(data="frame"))  # best effort: any one may be lost
            return recorder.counts[topic] > 0

        _spin_until(recorder_node, heard)
    finally:
        recorder.close()
    assert adapted == [topic]
    assert [r.topic for r in read_bag(tmp_path / "bag")][:1] == [topic]


def test_record_starts_on_the_stacks_topics_without_waiting_for_publishers(
    lone_node: Callable[[str], Node], tmp_path: Path
) -> None:
    """Nothing publishes yet, and discovery may take all the time it likes: the
    recording of the stack's own topics begins at once and takes what comes next, the
    task outcome (transient local) included; `cowp bag info` reads it back."""
    import threading

    from cowp_interfaces.msg import Situation, TaskOutcome
    from cowp_ros.ros.bag_info import format_bag_info, read_bag_info
    from cowp_ros.ros.bags import record_live
    from cowp_ros.ros.names import SITUATIONS_TOPIC, TASK_OUTCOMES_TOPIC
    from cowp_ros.ros.result_delivery import OUTCOMES_QOS

    said: list[str] = []
    recording, stop = threading.Event(), threading.Event()

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("recording"):
            recording.set()

    counts: dict[str, int] = {}
    recorder = threading.Thread(
        target=lambda: counts.update(
            record_live(
                tmp_path / "bag",
                [SITUATIONS_TOPIC, TASK_OUTCOMES_TOPIC],
                storage="sqlite3",
                duration_s=None,
                discovery_timeout_s=3600.0,  # a wait for discovery would hang the test
                stop=stop,
                say=say,
            )
        )
    )
    recorder.start()
    try:
        assert recording.wait(WITHIN_S), said
        talker = lone_node("stack_talker")
        situations = talker.create_publisher(Situation, SITUATIONS_TOPIC, 10)
        outcomes = talker.create_publisher(TaskOutcome, TASK_OUTCOMES_TOPIC, OUTCOMES_QOS)
        deadline = time.monotonic() + WITHIN_S
        while time.monotonic() < deadline and (
            situations.get_subscription_count() == 0 or outcomes.get_subscription_count() == 0
        ):
            time.sleep(0.05)
        situations.publish(Situation(text="the cup is dirty", object="cup_1"))
        outcomes.publish(TaskOutcome(outcome="completed"))
        from rclpy.duration import Duration

        assert situations.wait_for_all_acked(Duration(seconds=WITHIN_S))
        assert outcomes.wait_for_all_acked(Duration(seconds=WITHIN_S))
    finally:
        stop.set()
        recorder.join(timeout=WITHIN_S)
    assert counts == {SITUATIONS_TOPIC: 1, TASK_OUTCOMES_TOPIC: 1}, said
    info = read_bag_info(tmp_path / "bag")
    assert [(t.topic, t.msgtype, t.messages) for t in info.topics] == [
        (SITUATIONS_TOPIC, "cowp_interfaces/msg/Situation", 1),
        (TASK_OUTCOMES_TOPIC, "cowp_interfaces/msg/TaskOutcome", 1),
    ]
    assert info.topics[1].qos == ("reliable, transient local, keep last 8",)
    printed = format_bag_info(info)
    assert "2 topic(s), 2 message(s)" in printed and "duration:" in printed
