"""`cowp record` and `cowp replay`: rosbag2 bags of the live graph, without ros2 bag.

Bags are written with `rosbags` in the rosbag2 format (sqlite3 or mcap) that
`ros2 bag play` and `ros2 bag info` accept, so a bag recorded here replays on a robot
with a full ROS 2 install and the other way round.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from cowp_ros.errors import CowpError
from cowp_ros.ros.names import COWP_TOPICS

DEFAULT_TOPICS = (*COWP_TOPICS, "/joint_states", "/odom")


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


def run_record(args: argparse.Namespace) -> int:
    from cowp_ros.ros.bags import record_live

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    counts = record_live(
        args.bag,
        list(args.topics),
        storage=args.storage,
        duration_s=args.duration,
        discovery_timeout_s=args.discovery_timeout,
        stop=stop,
        say=print,
    )
    for topic, count in counts.items():
        print(f"  {topic}: {count} message(s)")
    return 0


def run_replay(args: argparse.Namespace) -> int:
    from cowp_ros.ros.bags import replay_live

    if not args.bag.exists():
        raise CowpError(f"no bag at {args.bag}")
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    report = replay_live(
        args.bag,
        topics=args.topics,
        rate=args.rate,
        subscriber_timeout_s=args.wait_subscribers,
        stop=stop,
    )
    print(f"published {report.published} message(s) from {args.bag}")
    if report.unheard:
        print(
            f"no subscriber within {args.wait_subscribers:g} s (published to nobody): "
            + ", ".join(report.unheard)
        )
    if report.unacknowledged:
        print(
            "not every message was acknowledged by the subscribers of "
            + ", ".join(report.unacknowledged)
            + ": they may have missed some (is a subscriber stalled?)",
            file=sys.stderr,
        )
        return 1
    return 0
