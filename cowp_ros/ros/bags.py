"""Small rosbag2 helpers on `rosbags`: write image bags, read records, record and replay live.

Why raw bytes: a bag stores each message as CDR, exactly what rmw sends, so replay
publishes those bytes with `Publisher.publish(bytes)` and recording takes them from a
`raw=True` subscription. Nothing is decoded on the way, so any message type replays
(including cowp_interfaces), and a replayed stream is byte-identical to the recorded one.

rosbags needs each type's definition to write a bag; the standard ROS 2 Kilted types
come with it, and cowp_interfaces' are read from their installed `.msg` files.

`write_image_bag`/`read_bag` need no ROS graph; `replay_bag` and `BagRecorder` take a
caller's rclpy node.
"""

from __future__ import annotations

import importlib
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from cowp_ros.errors import CowpError

if TYPE_CHECKING:
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from rosbags.typesys.store import Typestore

IMAGE_TYPE = "sensor_msgs/msg/Image"
STORAGES = {"sqlite3": StoragePlugin.SQLITE3, "mcap": StoragePlugin.MCAP}
BAG_VERSION: Literal[9] = 9  # what Kilted's rosbag2 writes


@dataclass(frozen=True)
class BagRecord:
    """One message in a bag, still serialized (CDR, as rmw sends it)."""

    topic: str
    msgtype: str  # e.g. sensor_msgs/msg/Image
    timestamp_ns: int
    rawdata: bytes


def _interface_share_dirs(package: str) -> Iterator[Path]:
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    for prefix in [*prefixes, sys.prefix]:
        candidate = Path(prefix) / "share" / package / "msg"
        if candidate.is_dir():
            yield candidate


def typestore(packages: Sequence[str] = ("cowp_interfaces",)) -> Typestore:
    """The ROS 2 Kilted typestore plus the message types of our own interface packages."""
    store = get_typestore(Stores.ROS2_KILTED)
    for package in packages:
        folder = next(_interface_share_dirs(package), None)
        if folder is None:
            continue  # not built: bags of standard types still work
        types: dict[str, Any] = {}
        for msg_file in sorted(folder.glob("*.msg")):
            types.update(get_types_from_msg(msg_file.read_text(), f"{package}/msg/{msg_file.stem}"))
        store.register(types)
    return store


def image_message(store: Typestore, image_bgr: np.ndarray, stamp_ns: int, frame_id: str) -> Any:
    """A rosbags sensor_msgs/Image (bgr8) holding `image_bgr`."""
    from cowp_ros.perception.image_encoding import bgr8_image_fields

    height, width, step, data = bgr8_image_fields(image_bgr)
    time_type = store.types["builtin_interfaces/msg/Time"]
    header_type = store.types["std_msgs/msg/Header"]
    return store.types[IMAGE_TYPE](
        header=header_type(
            stamp=time_type(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000),
            frame_id=frame_id,
        ),
        height=height,
        width=width,
        encoding="bgr8",
        is_bigendian=0,
        step=step,
        data=np.frombuffer(data, dtype=np.uint8),
    )


def write_bag(
    path: Path,
    messages: Iterable[tuple[str, str, int, Any]],
    store: Typestore | None = None,
    storage: str = "sqlite3",
) -> Path:
    """Write (topic, msgtype, timestamp_ns, rosbags message) tuples to a new bag at `path`."""
    if storage not in STORAGES:
        raise CowpError(
            f"unknown bag storage {storage!r}", hint=f"use one of {', '.join(STORAGES)}"
        )
    if path.exists():
        raise CowpError(f"{path} already exists", hint="choose a new bag path")
    store = store or typestore()
    connections: dict[tuple[str, str], Any] = {}
    with Writer(path, version=BAG_VERSION, storage_plugin=STORAGES[storage]) as writer:
        for topic, msgtype, timestamp_ns, message in messages:
            key = (topic, msgtype)
            if key not in connections:
                connections[key] = writer.add_connection(topic, msgtype, typestore=store)
            writer.write(connections[key], timestamp_ns, store.serialize_cdr(message, msgtype))
    return path


def write_image_bag(
    path: Path,
    frames: Iterable[np.ndarray],
    topic: str = "/wrist_camera/image_raw",
    frame_id: str = "wrist_camera",
    fps: float = 10.0,
    start_ns: int = 1_700_000_000 * 1_000_000_000,
    storage: str = "sqlite3",
) -> Path:
    """A bag of BGR frames on one image topic, `fps` apart, stamped from `start_ns`."""
    store = typestore(packages=())
    period_ns = round(1e9 / fps)

    def messages() -> Iterator[tuple[str, str, int, Any]]:
        for index, frame in enumerate(frames):
            stamp = start_ns + index * period_ns
            yield topic, IMAGE_TYPE, stamp, image_message(store, frame, stamp, frame_id)

    return write_bag(path, messages(), store, storage)


def read_bag(path: Path, topics: Iterable[str] | None = None) -> Iterator[BagRecord]:
    """The bag's records in time order, optionally only those on `topics`."""
    if not path.exists():
        raise CowpError(f"bag not found: {path}")
    wanted = set(topics) if topics is not None else None
    with Reader(path) as reader:
        connections = [c for c in reader.connections if wanted is None or c.topic in wanted]
        if not connections:
            return  # (an empty selection would mean "all" to rosbags)
        for connection, timestamp, rawdata in reader.messages(connections=connections):
            yield BagRecord(connection.topic, connection.msgtype, timestamp, bytes(rawdata))


def read_bag_topics(path: Path) -> list[str]:
    """The topics a bag holds, from its metadata."""
    if not path.exists():
        raise CowpError(f"bag not found: {path}")
    with Reader(path) as reader:
        return sorted({connection.topic for connection in reader.connections})


def deserialize(record: BagRecord, store: Typestore | None = None) -> Any:
    """Decode one record into a rosbags message object (for inspection and tests)."""
    return (store or typestore()).deserialize_cdr(record.rawdata, record.msgtype)


def message_class(msgtype: str) -> type:
    """The rclpy message class for `pkg/msg/Name` (needed to create raw publishers)."""
    package, kind, name = msgtype.split("/")
    try:
        return getattr(importlib.import_module(f"{package}.{kind}"), name)
    except (ImportError, AttributeError) as err:
        raise CowpError(
            f"message type {msgtype} is not installed", hint="run `make setup`"
        ) from err


@dataclass(frozen=True)
class ReplayReport:
    """What a replay sent, and where it may not have arrived.

    `unheard` are topics that still had no subscriber when publishing began, so their
    messages went to nobody; `unacknowledged` are topics whose subscribers had not
    acknowledged every message when the replay stopped waiting (reliable topics only).
    """

    published: int
    unheard: tuple[str, ...] = ()
    unacknowledged: tuple[str, ...] = ()

    @property
    def delivered(self) -> bool:
        return not self.unheard and not self.unacknowledged


def replay_bag(
    node: Node,
    path: Path,
    topics: Iterable[str] | None = None,
    rate: float = 1.0,
    qos_depth: int = 10,
    subscriber_timeout_s: float = 0.0,
    stop: threading.Event | None = None,
    ack_timeout_s: float = 10.0,
) -> ReplayReport:
    """Publish the bag's raw messages on their topics, keeping their spacing / `rate`,
    each with the QoS its recorded publishers offered (`replay_qos`).

    With `subscriber_timeout_s` > 0 it first waits (up to that long) until each topic's
    publisher has matched every subscriber the graph shows on it (at least one), so
    nothing is lost to discovery. After the last message it waits
    (up to `ack_timeout_s`) until the subscribers have acknowledged everything: a
    subscriber that discovered the replay's publisher late fetches the messages only
    then, and a publisher destroyed before that would take them with it.
    """
    if rate <= 0:
        raise CowpError(f"replay rate must be positive, got {rate}")
    from rclpy.duration import Duration

    from cowp_ros.ros.matching import wait_for_every_subscriber

    records = list(read_bag(path, topics))
    offered = recorded_qos(path)
    publishers: dict[str, Any] = {}
    for record in records:
        if record.topic not in publishers:
            publishers[record.topic] = node.create_publisher(
                message_class(record.msgtype),
                record.topic,
                replay_qos(offered.get(record.topic, []), qos_depth),
            )
    if subscriber_timeout_s > 0:
        wait_for_every_subscriber(node, publishers, subscriber_timeout_s, stop)
    unheard = tuple(t for t, p in publishers.items() if p.get_subscription_count() == 0)
    start_wall = time.monotonic()
    first_stamp = records[0].timestamp_ns if records else 0
    published = 0
    for record in records:
        due = start_wall + (record.timestamp_ns - first_stamp) / 1e9 / rate
        delay = due - time.monotonic()
        if stop is not None and stop.wait(max(0.0, delay)):
            break
        if stop is None and delay > 0:
            time.sleep(delay)
        publishers[record.topic].publish(record.rawdata)
        published += 1
    deadline = time.monotonic() + ack_timeout_s
    unacknowledged = tuple(
        topic
        for topic, publisher in publishers.items()
        if topic not in unheard
        and not publisher.wait_for_all_acked(
            Duration(nanoseconds=int(max(0.0, deadline - time.monotonic()) * 1e9))
        )
    )
    return ReplayReport(published, unheard, unacknowledged)


def offered_profiles(node: Node, topic: str) -> list[QoSProfile]:
    """The QoS each publisher of `topic` discovered so far offers."""
    return [info.qos_profile for info in node.get_publishers_info_by_topic(topic)]


def adapted_qos(best_effort: bool, transient_local: bool, depth: int) -> QoSProfile:
    """A profile that matches what publishers offer (recording) or what recorded
    publishers offered (replay), as rosbag2 adapts it: best effort when any of them
    offers only that (a reliable subscription never matches it), transient local when
    every one keeps its last messages for late joiners."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        depth=depth,
        reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL
        if transient_local
        else DurabilityPolicy.VOLATILE,
    )


def recording_qos(offered: Sequence[QoSProfile], depth: int) -> QoSProfile:
    """The QoS to record a topic with, given what its publishers offer (`ros2 bag
    record` adapts the same way): best effort for a camera driver's sensor-data stream;
    transient local for the task outcomes, so the bag also holds what the publisher kept
    from before the recording began (stamped when it arrived). A topic with no publisher
    discovered yet is recorded reliable and volatile."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    return adapted_qos(
        any(q.reliability == ReliabilityPolicy.BEST_EFFORT for q in offered),
        bool(offered) and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL for q in offered),
        depth,
    )


def replay_qos(offered: Sequence[Qos], depth: int) -> QoSProfile:
    """The QoS to replay a topic with, given the profiles its recorded publishers
    offered (the bag's metadata, written by `cowp record` and `ros2 bag record`): as
    `ros2 bag play` does, so transient-local subscribers (a task client's outcomes)
    hear a replayed topic that was transient local. None recorded: reliable, volatile."""
    return adapted_qos(
        any(q.reliability == QosReliability.BEST_EFFORT for q in offered),
        bool(offered) and all(q.durability == QosDurability.TRANSIENT_LOCAL for q in offered),
        depth,
    )


def bag_qos(profile: QoSProfile) -> Qos:
    """An rclpy profile as the bag's metadata stores it (`offered_qos_profiles`)."""

    def when(duration: Any) -> QosTime:
        sec, nsec = divmod(int(duration.nanoseconds), 1_000_000_000)
        return QosTime(sec, nsec)

    def named(kind: Any, policy: Any) -> Any:
        """rclpy's policy as rosbags' enum of the same names (UNKNOWN if it has none)."""
        return kind.__members__.get(policy.name, kind.UNKNOWN)

    return Qos(
        named(QosHistory, profile.history),
        profile.depth,
        named(QosReliability, profile.reliability),
        named(QosDurability, profile.durability),
        when(profile.deadline),
        when(profile.lifespan),
        named(QosLiveliness, profile.liveliness),
        when(profile.liveliness_lease_duration),
        profile.avoid_ros_namespace_conventions,
    )


def recorded_qos(path: Path) -> dict[str, list[Qos]]:
    """Topic -> the QoS profiles its publishers offered, from a bag's metadata (empty
    for a bag that stored none)."""
    with Reader(path) as reader:
        found: dict[str, list[Qos]] = {}
        for connection in reader.connections:
            ext = connection.ext
            profiles = getattr(ext, "offered_qos_profiles", [])
            found.setdefault(connection.topic, []).extend(profiles)
        return found


class BagRecorder:
    """Records topics of a live graph into a new bag, as raw CDR (spin `node` meanwhile).

    One thread owns the bag writer (rosbags' sqlite3 storage refuses use from any other
    thread), fed through a queue by the subscription callbacks, whatever thread the
    executor runs them in. Each topic is subscribed with `recording_qos` and the
    profiles its publishers offered go into the bag's metadata, as rosbag2 stores them
    (so `ros2 bag play` and `replay_bag` publish it alike): discover the publishers
    first (`discover_types`) so that both can adapt.
    """

    def __init__(
        self,
        node: Node,
        path: Path,
        topics: dict[str, str],
        storage: str = "sqlite3",
        qos_depth: int = 10,
        expected_qos: dict[str, QoSProfile] | None = None,
    ) -> None:
        """`topics` maps topic names to message types (`sensor_msgs/msg/Image`);
        `expected_qos` what a topic's publishers offer when none was discovered yet
        (the task outcomes' transient local)."""
        if storage not in STORAGES:
            raise CowpError(
                f"unknown bag storage {storage!r}", hint=f"use one of {', '.join(STORAGES)}"
            )
        if path.exists():
            raise CowpError(f"{path} already exists", hint="choose a new bag path")
        self.path = path
        self.counts: dict[str, int] = dict.fromkeys(topics, 0)
        expected = expected_qos or {}
        offered = {
            topic: offered_profiles(node, topic) or ([expected[topic]] if topic in expected else [])
            for topic in topics
        }
        self._node = node
        self.received = 0  # messages handed over by the subscriptions (counts: written)
        self.received_on: dict[str, int] = dict.fromkeys(topics, 0)
        self._qos_depth = qos_depth
        self._topics = dict(topics)
        self._queue: queue.Queue[tuple[str, int, bytes] | None] = queue.Queue()
        self._opened = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(
            target=self._write_loop,
            args=(path, topics, offered, storage),
            name="bag-writer",
            daemon=True,
        )
        self._thread.start()
        self._opened.wait()
        if self._failure is not None:
            raise CowpError(f"cannot record to {path}: {self._failure}")
        self._subscriptions = [
            self._subscribe(topic, recording_qos(offered[topic], qos_depth)) for topic in topics
        ]

    def _subscribe(self, topic: str, qos: QoSProfile) -> Any:
        return self._node.create_subscription(
            message_class(self._topics[topic]), topic, self._take(topic), qos, raw=True
        )

    def _take(self, topic: str) -> Callable[[bytes], None]:
        def take(data: bytes) -> None:
            self.received += 1
            self.received_on[topic] += 1
            self._queue.put((topic, time.time_ns(), data))

        return take

    def take_until(self, topic: str, spin_once: Callable[[], None], timeout_s: float) -> bool:
        """Spin (the caller's executor) until a message of `topic` was taken, or
        `timeout_s`: a message published as a run ends (its outcome) must not be left
        in the reader when the recording closes."""
        deadline = time.monotonic() + timeout_s
        while not self.received_on[topic] and time.monotonic() < deadline:
            spin_once()
        return bool(self.received_on[topic])

    def adapt(self) -> list[str]:
        """Subscribe again, as its publishers offer, to each topic that no publisher
        matched although the graph now shows one (a best-effort camera found after the
        recording began, which a reliable subscription never matches); the topics."""
        adapted = []
        for index, subscription in enumerate(self._subscriptions):
            topic = subscription.topic_name
            offered = offered_profiles(self._node, topic)
            if subscription.get_publisher_count() == 0 and offered:
                qos = recording_qos(offered, self._qos_depth)
                if qos.reliability != subscription.qos_profile.reliability or (
                    qos.durability != subscription.qos_profile.durability
                ):
                    self._node.destroy_subscription(subscription)
                    self._subscriptions[index] = self._subscribe(topic, qos)
                    adapted.append(topic)
        return adapted

    def unmatched(self) -> list[str]:
        """Recorded topics with no publisher matched yet: their messages are not heard
        until discovery matches one (a recording started with a graph misses what comes
        before)."""
        return [s.topic_name for s in self._subscriptions if s.get_publisher_count() == 0]

    def _write_loop(
        self,
        path: Path,
        topics: dict[str, str],
        offered: dict[str, list[QoSProfile]],
        storage: str,
    ) -> None:
        try:
            store = typestore()
            writer = Writer(path, version=BAG_VERSION, storage_plugin=STORAGES[storage])
            writer.open()
            connections = {
                topic: writer.add_connection(
                    topic,
                    msgtype,
                    typestore=store,
                    offered_qos_profiles=[bag_qos(q) for q in offered[topic]],
                )
                for topic, msgtype in topics.items()
            }
        except Exception as err:  # reported by __init__ in the caller's thread
            self._failure = err
            self._opened.set()
            return
        self._opened.set()
        try:
            while (item := self._queue.get()) is not None:
                topic, timestamp_ns, data = item
                writer.write(connections[topic], timestamp_ns, data)
                self.counts[topic] += 1
        finally:
            writer.close()

    def close(self) -> None:
        """Stop recording and finish the bag (idempotent)."""
        for subscription in self._subscriptions:
            self._node.destroy_subscription(subscription)
        self._subscriptions.clear()
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


ADAPT_EVERY_S = 0.5  # how often a recording looks for publishers it cannot match yet
DRAIN_S = 1.0  # at most this long taking what arrived before the recording was stopped


def discover_types(node: Node, topics: list[str], timeout_s: float) -> dict[str, str]:
    """Topic -> message type, read from the graph (waits for discovery)."""
    deadline = time.monotonic() + timeout_s
    found: dict[str, str] = {}
    while time.monotonic() < deadline:
        known = dict(node.get_topic_names_and_types())
        found = {t: known[t][0] for t in topics if known.get(t)}
        if len(found) == len(topics):
            break
        time.sleep(0.2)
    return found


def record_live(
    bag: Path,
    topics: list[str],
    *,
    storage: str,
    duration_s: float | None,
    discovery_timeout_s: float,
    stop: threading.Event,
    say: Callable[[str], None],
) -> dict[str, int]:
    """Record the live graph's `topics` into `bag` until `stop` (or `duration_s`);
    returns the message count per topic.

    The stack's own topics (`names.TOPIC_TYPES`) are subscribed at once, before any
    publisher is discovered, so the recording starts within a second or two and takes
    what is published from then on; only a topic of unknown type waits for discovery
    to tell its type (up to `discovery_timeout_s`), and is skipped (said) when nobody
    publishes it."""
    from cowp_ros.ros.names import TASK_OUTCOMES_TOPIC, TOPIC_TYPES
    from cowp_ros.ros.own_node import OwnNode
    from cowp_ros.ros.result_delivery import OUTCOMES_QOS

    with OwnNode("cowp_recorder") as own:
        types = {t: TOPIC_TYPES[t] for t in topics if t in TOPIC_TYPES}
        unknown = [t for t in topics if t not in types]
        if unknown:
            types.update(discover_types(own.node, unknown, discovery_timeout_s))
        missing = [t for t in topics if t not in types]
        if not types:
            raise CowpError(
                f"none of the topics is published: {', '.join(topics)}",
                hint="start the graph first, or check ROS_DOMAIN_ID",
            )
        if missing:
            say(f"not published (skipped): {', '.join(missing)}")
        recorder = BagRecorder(
            own.node,
            bag,
            {t: types[t] for t in topics if t in types},
            storage=storage,
            expected_qos={TASK_OUTCOMES_TOPIC: OUTCOMES_QOS},
        )
        try:
            say(f"recording {len(types)} topic(s) into {bag}; Ctrl-C to stop")
            end = time.monotonic() + duration_s if duration_s else None
            next_adapt = time.monotonic() + ADAPT_EVERY_S
            while not stop.is_set() and (end is None or time.monotonic() < end):
                own.executor.spin_once(timeout_sec=0.1)
                if time.monotonic() >= next_adapt:
                    next_adapt = time.monotonic() + ADAPT_EVERY_S
                    for topic in recorder.adapt():
                        say(f"{topic}: subscribed again with its publishers' QoS")
            # What has arrived but not been taken yet is the recording's too (a Ctrl-C
            # right after a message): take it, for as long as messages keep coming.
            drain_end, idle = time.monotonic() + DRAIN_S, 0
            while time.monotonic() < drain_end and idle < 3:
                before = recorder.received
                own.executor.spin_once(timeout_sec=0.05)
                idle = idle + 1 if recorder.received == before else 0
        finally:
            recorder.close()  # what was recorded is kept, whatever ended the recording
        return dict(recorder.counts)


def replay_live(
    bag: Path,
    *,
    topics: Sequence[str] | None,
    rate: float,
    subscriber_timeout_s: float,
    stop: threading.Event,
) -> ReplayReport:
    """Publish a bag's messages into the live graph; says what was sent and what may be lost."""
    from cowp_ros.ros.own_node import OwnNode

    with OwnNode("cowp_replay") as own:
        return replay_bag(
            own.node,
            bag,
            topics=topics,
            rate=rate,
            subscriber_timeout_s=subscriber_timeout_s,
            stop=stop,
        )
