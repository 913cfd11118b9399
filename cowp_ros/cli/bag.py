"""`cowp record` and `cowp replay`: rosbag2 bags of the live graph, without ros2 bag.

Bags are written with `rosbags` in the rosbag2 format (sqlite3 or mcap) that
`ros2 bag play` and `ros2 bag info` accept, so a bag recorded here replays on a robot
with a full ROS 2 install and the other way round.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path

from cowp_ros.errors import CowpError

DEFAULT_TOPICS = (
    "/cowp/situations",
    "/cowp/current_step",
    "/cowp/detections",
    "/joint_states",
    "/odom",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    record = subparsers.add_parser(
        "record",
        help="record live topics into a rosbag2 bag",
        description="Record topics of the running graph until Ctrl-C or --duration.",
    )
    record.add_argument("bag", type=Path, help="bag folder to create")
    record.add_argument(
        "--topics",
        nargs="+",
        default=list(DEFAULT_TOPICS),
        help=f"topics to record (default: {' '.join(DEFAULT_TOPICS)})",
    )
    record.add_argument("--duration", type=float, help="seconds to record (default: until Ctrl-C)")
    record.add_argument("--storage", choices=("sqlite3", "mcap"), default="sqlite3")
    record.add_argument(
        "--discovery-timeout", type=float, default=10.0, help="seconds to find the topics' types"
    )
    record.set_defaults(func=run_record)

    replay = subparsers.add_parser(
        "replay",
        help="publish a recorded bag onto the live topics",
        description="Publish each message of the bag on its topic, keeping the recorded "
        "spacing divided by --rate.",
    )
    replay.add_argument("bag", type=Path, help="bag folder (rosbag2, sqlite3 or mcap)")
    replay.add_argument("--rate", type=float, default=1.0, help="playback speed factor")
    replay.add_argument("--topics", nargs="+", help="only these topics (default: all)")
    replay.add_argument(
        "--wait-subscribers",
        type=float,
        default=10.0,
        help="seconds to wait for a subscriber on each topic before publishing",
    )
    replay.set_defaults(func=run_replay)


def discover_types(node, topics: list[str], timeout_s: float) -> dict[str, str]:
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


def run_record(args: argparse.Namespace) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from cowp_ros.ros.bags import BagRecorder

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = Node("cowp_recorder", context=context)
        types = discover_types(node, list(args.topics), args.discovery_timeout)
        missing = [t for t in args.topics if t not in types]
        if not types:
            raise CowpError(
                f"none of the topics is published: {', '.join(args.topics)}",
                hint="start the graph first, or check ROS_DOMAIN_ID",
            )
        if missing:
            print(f"not published (skipped): {', '.join(missing)}")
        recorder = BagRecorder(node, args.bag, types, storage=args.storage)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        print(f"recording {len(types)} topic(s) into {args.bag}; Ctrl-C to stop")
        end = time.monotonic() + args.duration if args.duration else None
        while not stop.is_set() and (end is None or time.monotonic() < end):
            executor.spin_once(timeout_sec=0.1)
        recorder.close()
        for topic, count in recorder.counts.items():
            print(f"  {topic}: {count} message(s)")
    finally:
        rclpy.try_shutdown(context=context)
    return 0


def run_replay(args: argparse.Namespace) -> int:
    import rclpy
    from rclpy.node import Node

    from cowp_ros.ros.bags import replay_bag

    if not args.bag.exists():
        raise CowpError(f"no bag at {args.bag}")
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = Node("cowp_replay", context=context)
        count = replay_bag(
            node,
            args.bag,
            topics=args.topics,
            rate=args.rate,
            subscriber_timeout_s=args.wait_subscribers,
            stop=stop,
        )
        print(f"published {count} message(s) from {args.bag}")
    finally:
        rclpy.try_shutdown(context=context)
    return 0
