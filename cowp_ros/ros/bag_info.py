"""What a rosbag2 bag holds, read from its metadata and index: `cowp bag info BAG`.

`ros2 bag info` is not installable from PyPI; this reads the same facts with `rosbags`
(the library that writes our bags): per topic its type, message count and the QoS its
publishers offered (what a replay publishes with), and the bag's time span. The
message data are not read, so a bag of camera images answers at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rosbags.interfaces import Qos
from rosbags.rosbag2 import Reader

from cowp_ros.errors import CowpError


@dataclass(frozen=True)
class TopicInfo:
    topic: str
    msgtype: str
    messages: int
    qos: tuple[str, ...]  # one line per publisher the recording saw


@dataclass(frozen=True)
class BagInfo:
    path: Path
    storage: str
    messages: int
    start_ns: int
    end_ns: int
    topics: tuple[TopicInfo, ...]

    @property
    def duration_s(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9


def describe_qos(qos: Qos) -> str:
    """`reliable, transient local, keep last 8`: the policies a replay adapts to."""
    history = qos.history.name.lower().replace("_", " ")
    depth = f" {qos.depth}" if qos.history.name == "KEEP_LAST" else ""
    durability = qos.durability.name.lower().replace("_", " ")
    return f"{qos.reliability.name.lower().replace('_', ' ')}, {durability}, {history}{depth}"


def read_bag_info(path: Path) -> BagInfo:
    """The bag's topics, counts, span and QoS; CowpError naming the problem otherwise."""
    if not (path / "metadata.yaml").is_file():
        raise CowpError(
            f"no rosbag2 bag at {path}",
            hint="give the bag's folder (the one holding metadata.yaml), e.g. build/demo/<run>/bag",
        )
    try:
        with Reader(path) as reader:
            topics = tuple(
                TopicInfo(
                    connection.topic,
                    connection.msgtype,
                    connection.msgcount,
                    tuple(
                        describe_qos(q) for q in getattr(connection.ext, "offered_qos_profiles", [])
                    ),
                )
                for connection in sorted(reader.connections, key=lambda c: c.topic)
            )
            storage = "mcap" if any(p.suffix == ".mcap" for p in path.iterdir()) else "sqlite3"
            empty = reader.message_count == 0
            return BagInfo(
                path,
                storage,
                reader.message_count,
                0 if empty else reader.start_time,
                0 if empty else reader.end_time,
                topics,
            )
    except CowpError:
        raise
    except Exception as err:  # rosbags raises its own types for each kind of damage
        raise CowpError(
            f"cannot read the bag at {path}: {err}",
            hint="is it complete? A recording killed before it closed may lack its index",
        ) from err


def _when(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def format_bag_info(info: BagInfo) -> str:
    """What a person reads: the bag, its span, then one row per topic."""
    lines = [
        f"bag: {info.path} ({info.storage}), {len(info.topics)} topic(s), "
        f"{info.messages} message(s)",
        f"duration: {info.duration_s:.3f} s"
        + (f" ({_when(info.start_ns)} to {_when(info.end_ns)} UTC)" if info.messages else ""),
    ]
    width = max((len(t.topic) for t in info.topics), default=5)
    type_width = max((len(t.msgtype) for t in info.topics), default=4)
    for topic in info.topics:
        qos = "; ".join(topic.qos) or "no QoS recorded (replayed reliable, volatile)"
        lines.append(
            f"  {topic.topic:<{width}}  {topic.msgtype:<{type_width}}  "
            f"{topic.messages:>6} msgs  {qos}"
        )
    return "\n".join(lines)
