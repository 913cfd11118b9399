"""`cowp task send | situation | cancel`: talk to a running graph from the terminal.

The venv's stand-ins for the ros2cli lines (ros2cli is not installable from PyPI); on a
ROS 2 install both work:

    cowp task send serve_water
    ros2 action send_goal --feedback /cowp/run_task cowp_interfaces/action/RunTask \\
        "{task: serve_water}"

    cowp task situation "the faucet is broken" --object faucet_1 --source operator
    ros2 topic pub --once /cowp/situations cowp_interfaces/msg/Situation \\
        "{text: 'the faucet is broken', object: faucet_1, source: operator, confidence: 1.0}"

    cowp task cancel
    (ros2cli has no cancel verb; Ctrl-C on `ros2 action send_goal` cancels its goal)

`send` prints the task manager's feedback as the narrative until the result, then the
outcome, what was done and the report's path (exit 0 when completed, 3 otherwise);
Ctrl-C cancels the goal and still waits for its result. Start the graph first
(`cowp bringup --profile sim`) with the same ROS_DOMAIN_ID.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading

from cowp_ros.errors import CowpError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "task",
        help="send a task to the running graph, publish a situation, or cancel the task",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    send = verbs.add_parser("send", help="send a RunTask goal and follow it to its result")
    send.add_argument("task", help='a task name or description ("serve water")')
    send.add_argument(
        "--timeout", type=float, default=900.0, help="seconds to wait for the result (900)"
    )
    send.add_argument(
        "--wait-server", type=float, default=30.0, help="seconds to wait for the task manager"
    )
    send.set_defaults(func=send_task)
    situation = verbs.add_parser("situation", help="publish a situation on /cowp/situations")
    situation.add_argument("text", help='the situation in English: "the cup is dirty"')
    situation.add_argument("--object", default="", help="the object it is about (cup_1)")
    situation.add_argument("--source", default="operator", help="who saw it (operator)")
    situation.add_argument("--confidence", type=float, default=1.0, help="0..1 (1.0)")
    situation.add_argument(
        "--wait",
        type=float,
        default=10.0,
        help="seconds to wait for every listener the graph shows (the task manager, a "
        "recorder), and then for each to acknowledge the situation (10)",
    )
    situation.set_defaults(func=publish_situation)
    cancel = verbs.add_parser("cancel", help="cancel the task the task manager is running")
    cancel.add_argument("--wait", type=float, default=10.0, help="seconds to wait (10)")
    cancel.set_defaults(func=cancel_task)


def send_task(args: argparse.Namespace) -> int:
    from cowp_ros.cowp.driver import Outcome
    from cowp_ros.cowp.session import RunEnd
    from cowp_ros.ros.clients.narrative import follow_task
    from cowp_ros.ros.clients.task_client import TaskClient

    stop = threading.Event()
    # Ctrl-C cancels from the first moment (starting the client's node can take a second
    # on a busy machine); the caller's handler is back whatever ends the command, a
    # client that fails to start included.
    with contextlib.ExitStack() as cleanup:  # undone in reverse: the handler goes last
        cleanup.callback(
            signal.signal, signal.SIGINT, signal.signal(signal.SIGINT, lambda *_: stop.set())
        )
        client = TaskClient()
        cleanup.callback(client.close)
        if not client.wait_until_ready(args.wait_server, cancel=stop):
            print("canceled before the task was sent: nothing ran")
            return 130
        print(f"RunTask: {args.task}", flush=True)
        client.run_task(args.task)
        result = follow_task(client, args.timeout, stop)
    print(f"outcome: {RunEnd(result.outcome, result.explanation).told()}")  # one "aborted:"
    print(f"executed: {' '.join(result.executed_steps) or 'nothing'}")
    if result.report_path:
        print(f"report: {result.report_path}")
    return 0 if result.outcome is Outcome.COMPLETED else 3


def publish_situation(args: argparse.Namespace) -> int:
    from cowp_ros.ros.clients.graph_verbs import publish_situation as publish
    from cowp_ros.ros.names import SITUATIONS_TOPIC
    from cowp_ros.safe_text import situation_text

    text = situation_text(args.text)
    if not 0.0 <= args.confidence <= 1.0:
        raise CowpError(f"--confidence {args.confidence}: give a number from 0 to 1")
    matched, seen = publish(
        text, about=args.object, source=args.source, confidence=args.confidence, wait_s=args.wait
    )
    about = f" about {args.object}" if args.object else ""
    print(
        f"published on {SITUATIONS_TOPIC}: {text!r}{about} (source {args.source}), "
        f"to {matched} listener(s)"
    )
    if matched < seen:
        print(
            f"{seen - matched} listener(s) the graph shows had not matched within "
            f"{args.wait:g} s and may have missed it"
        )
    return 0


def cancel_task(args: argparse.Namespace) -> int:
    from cowp_ros.ros.clients.graph_verbs import cancel_running_task

    canceling = cancel_running_task(args.wait)
    if not canceling:
        print("no task was running: nothing to cancel")
        return 0
    print(f"canceling {canceling} task(s); the task manager ends it with a result")
    return 0
