"""`cowp record`, `cowp replay` and `cowp bag info`: rosbag2 bags of the live graph,
without ros2 bag.

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
from cowp_ros.ros.names import COWP_TOPICS, JOINT_STATES_TOPIC, ODOM_TOPIC

DEFAULT_TOPICS = (*COWP_TOPICS, JOINT_STATES_TOPIC, ODOM_TOPIC)


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
    replay.add_argument(
        "--topics",
        nargs="+",
        help="only these topics (default: all but what the live graph makes itself: "
        "the robot's state, the current step, the outcomes and the detections)",
    )
    replay.add_argument(
        "--wait-subscribers",
        type=float,
        default=10.0,
        help="seconds to wait for a subscriber on each topic before publishing",
    )
    replay.add_argument(
        "--follow-steps",
        action="store_true",
        help="publish the messages recorded during each step when the live executor "
        "announces that step (the bag must hold /cowp/current_step)",
    )
    replay.add_argument(
        "--idle",
        type=float,
        default=120.0,
        help="with --follow-steps: stop after this many seconds without a recorded step",
    )
    replay.set_defaults(func=run_replay)

    bag = subparsers.add_parser(
        "bag", help="look into a rosbag2 bag", description="Look into a rosbag2 bag."
    )
    verbs = bag.add_subparsers(dest="verb", metavar="VERB", required=True)
    info = verbs.add_parser(
        "info",
        help="topics, types, message counts, duration and QoS of a bag",
        description="Print a bag's topics with their types, message counts and the QoS "
        "their publishers offered (what a replay publishes with), and its duration.",
    )
    info.add_argument("bag", type=Path, help="bag folder (rosbag2, sqlite3 or mcap)")
    info.set_defaults(func=run_bag_info)


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


def run_bag_info(args: argparse.Namespace) -> int:
    from cowp_ros.ros.bag_info import format_bag_info, read_bag_info

    print(format_bag_info(read_bag_info(args.bag)))
    return 0


def run_replay(args: argparse.Namespace) -> int:
    from cowp_ros.ros.bags import replay_live

    if not args.bag.exists():
        raise CowpError(f"no bag at {args.bag}")
    from cowp_ros.ros.bags import read_bag_topics
    from cowp_ros.ros.names import GRAPH_MADE_TOPICS

    topics = args.topics
    if topics is None:
        recorded = read_bag_topics(args.bag)
        topics = [t for t in recorded if t not in GRAPH_MADE_TOPICS]
        left_out = [t for t in recorded if t in GRAPH_MADE_TOPICS]
        if left_out:
            print(
                f"not replayed, the live graph makes them: {', '.join(left_out)} "
                "(name them with --topics to replay them anyway)"
            )
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.follow_steps:
        from cowp_ros.ros.step_replay import replay_following_steps

        report = replay_following_steps(
            args.bag,
            topics=topics,
            rate=args.rate,
            subscriber_timeout_s=args.wait_subscribers,
            idle_s=args.idle,
            stop=stop,
            say=lambda line: print(line, flush=True),
        )
    else:
        report = replay_live(
            args.bag,
            topics=topics,
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
