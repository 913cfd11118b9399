"""One-shot graph verbs for the command line: publish a situation, cancel the task.

`cowp task situation` and `cowp task cancel` (cowp_ros/cli/task.py) call these; each
makes a short-lived node in a context of its own, waits (bounded) for the other side,
does its one thing and goes.
"""

from __future__ import annotations

import time
from typing import Any

from action_msgs.msg import GoalInfo
from action_msgs.srv import CancelGoal
from rclpy.duration import Duration

from cowp_interfaces.msg import Situation
from cowp_ros.errors import CowpError
from cowp_ros.ros import handshake
from cowp_ros.ros.matching import compatible_subscriptions, everyone_matched
from cowp_ros.ros.names import RUN_TASK_ACTION, SITUATIONS_TOPIC
from cowp_ros.ros.own_node import OwnNode
from cowp_ros.ros.waiting import WaitEnd


def publish_situation(
    text: str, *, about: str, source: str, confidence: float, wait_s: float
) -> tuple[int, int]:
    """Publish one situation once every listener the graph shows (the task manager, a
    recorder) has matched, within `wait_s`; (listeners matched, listeners seen)."""
    with OwnNode("cowp_situation_publisher") as graph:
        publisher = graph.node.create_publisher(Situation, SITUATIONS_TOPIC, 10)
        deadline = time.monotonic() + wait_s
        if not graph.spin_until(lambda: publisher.get_subscription_count() > 0, wait_s):
            raise CowpError(
                f"nobody listens on {SITUATIONS_TOPIC} after {wait_s:.0f} s",
                hint="start the graph first (cowp bringup --profile sim) with the same "
                "ROS_DOMAIN_ID",
            )
        # One listener matched is not all: a recorder found later would miss it.
        graph.spin_until(
            lambda: everyone_matched(graph.node, SITUATIONS_TOPIC, publisher),
            max(0.0, deadline - time.monotonic()),
        )
        matched = publisher.get_subscription_count()
        seen = max(matched, compatible_subscriptions(graph.node, SITUATIONS_TOPIC, publisher))
        message = Situation(text=text, object=about, source=source, confidence=confidence)
        message.header.stamp = graph.node.get_clock().now().to_msg()
        publisher.publish(message)
        # The node must not go before the message has arrived: a subscriber that has
        # not yet found this publisher asks for it only once it has (reliable QoS).
        if not publisher.wait_for_all_acked(Duration(seconds=wait_s)):
            raise CowpError(
                f"the situation was published on {SITUATIONS_TOPIC}, but not every "
                f"subscriber acknowledged it within {wait_s:.0f} s",
                hint="the task manager may have missed it: its log says which situations it took",
            )
    return matched, seen


def cancel_running_task(wait_s: float) -> int:
    """Ask the task manager to cancel every goal it has; how many it is canceling.

    A new client's request or answer can be lost while the server is still discovering
    it, and a cancel-all cannot be sent twice (the second one finds the goals already
    canceling, and would report none). So the client first asks to cancel a goal nobody
    sent, which the server answers at once and harmlessly ("unknown goal"), again every
    `handshake.REASK_S` until an answer comes; then it sends the cancel-all once.
    """
    service = f"{RUN_TASK_ACTION}/_action/cancel_goal"
    with OwnNode("cowp_task_cancel") as graph:
        client: Any = graph.node.create_client(CancelGoal, service)
        if not client.wait_for_service(timeout_sec=wait_s):
            raise CowpError(
                f"no task manager serves {RUN_TASK_ACTION} after {wait_s:.0f} s",
                hint="is the graph running, with the same ROS_DOMAIN_ID?",
            )

        def cancel_nobody() -> Any:
            nobody = GoalInfo(goal_id=handshake.nobody_goal_id())
            return client.call_async(CancelGoal.Request(goal_info=nobody))

        deadline = time.monotonic() + wait_s
        answered = handshake.handshake(cancel_nobody, handshake.spinning_wait(graph), deadline)
        if answered is not WaitEnd.DONE:
            raise CowpError(
                f"the task manager serves {RUN_TASK_ACTION} but did not answer within "
                f"{wait_s:.0f} s",
                hint="it is up but not serving requests: its log says why",
            )
        # A zero goal id and a zero stamp ask the server to cancel every goal it has.
        future = client.call_async(CancelGoal.Request(goal_info=GoalInfo()))
        if not graph.spin_until(future.done, wait_s):
            raise CowpError(f"the task manager did not answer the cancel within {wait_s} s")
        response = future.result()
    return len(response.goals_canceling) if response is not None else 0
