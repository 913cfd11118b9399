"""Mobile base backends: a goal topic watched on odometry, or Nav2's NavigateToPose action.

The topic backend is what sim_world and the Gazebo profile's base_controller serve
(robot.yaml base.goal_topic / base.odom_topic); arrival is judged here, on odometry,
so a base that ignores the goal is caught by the deadline and a silent /odom by its
name. The Nav2 backend sends nav2_msgs/action/NavigateToPose itself; nav2_msgs is
imported only when chosen, since Nav2 is not installable everywhere this code runs.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data

from cowp_ros.ros.skill_backends.common import (
    Signal,
    Timeouts,
    WaitEnd,
    action_client,
    import_action_type,
    run_action,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.skills.backends import NAV2_MSGS
from cowp_ros.skills.config import BaseConfig
from cowp_ros.skills.interfaces import MotionResult, Pose2D, Status

NAV2_APT_PACKAGE = NAV2_MSGS.apt


def yaw_of(x: float, y: float, z: float, w: float) -> float:
    """Heading (rotation about z) of a quaternion."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def pose_stamped(pose: Pose2D, frame_id: str, stamp: Any | None = None) -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.pose.position.x = pose.x
    msg.pose.position.y = pose.y
    msg.pose.orientation.z = math.sin(pose.yaw / 2.0)
    msg.pose.orientation.w = math.cos(pose.yaw / 2.0)
    return msg


class TopicBase:
    """Publish a PoseStamped goal; done when odometry is within both tolerances."""

    def __init__(
        self,
        node: Node,
        config: BaseConfig,
        timeouts: Timeouts,
        callback_group: CallbackGroup | None = None,
    ) -> None:
        self.node = node
        self.config = config
        self.timeouts = timeouts
        self.description = f"topic base ({config.goal_topic} -> {config.odom_topic})"
        self.signal = Signal()
        self._lock = threading.Lock()
        self._pose: Pose2D | None = None
        self.publisher = node.create_publisher(PoseStamped, config.goal_topic, 10)
        self.subscription = node.create_subscription(
            Odometry, config.odom_topic, self._on_odom, qos_profile_sensor_data,
            callback_group=callback_group,
        )  # fmt: skip

    def _on_odom(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        with self._lock:
            self._pose = Pose2D(p.x, p.y, yaw_of(q.x, q.y, q.z, q.w))
        self.signal.notify()

    @property
    def pose(self) -> Pose2D | None:
        with self._lock:
            return self._pose

    def _arrived(self, goal: Pose2D) -> bool:
        pose = self.pose
        return (
            pose is not None
            and pose.distance_to(goal) <= self.config.position_tolerance_m
            and pose.yaw_error_to(goal) <= self.config.yaw_tolerance_rad
        )

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> MotionResult:
        topic = self.config.goal_topic
        end = wait_for_subscriber(
            self.publisher.get_subscription_count, cancel=cancel, timeout_s=self.timeouts.server_s
        )
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled(f"canceled before driving to {name}")
        if end is not WaitEnd.DONE:
            return MotionResult.failure(
                f"nothing subscribes to {topic} within {self.timeouts.server_s:g} s "
                "(is the base driver or sim_world running?)"
            )
        self.publisher.publish(
            pose_stamped(pose, self.config.frame_id, self.node.get_clock().now().to_msg())
        )
        end = wait_until(
            lambda: self._arrived(pose),
            cancel=cancel,
            deadline=time.monotonic() + self.timeouts.navigate_s,
            signal=self.signal,
            silence_s=self.timeouts.topic_s,
        )
        if end is WaitEnd.DONE:
            return MotionResult.success(f"reached {name}")
        if end is WaitEnd.SILENT:
            return MotionResult.failure(
                silent_message(self.config.odom_topic, "nav_msgs/Odometry", self.timeouts.topic_s)
            )
        self._stop()
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled(f"drive to {name} canceled; base stopped")
        current = self.pose
        gap = (
            f"{current.distance_to(pose):.2f} m and {current.yaw_error_to(pose):.2f} rad away"
            if current
            else "position unknown"
        )
        return MotionResult.failure(
            f"did not reach {name} within {self.timeouts.navigate_s:g} s ({gap}); base stopped"
        )

    def _stop(self) -> None:
        """A goal at the current pose: the simplest stop every goal-topic base honours."""
        current = self.pose
        if current is not None:
            self.publisher.publish(
                pose_stamped(current, self.config.frame_id, self.node.get_clock().now().to_msg())
            )


def import_navigate_to_pose() -> Any:
    """nav2_msgs' NavigateToPose action type, or a CowpError saying what to install."""
    return import_action_type(
        "nav2_msgs",
        "NavigateToPose",
        apt_package=NAV2_APT_PACKAGE,
        instead="set the executor's base_backend parameter to 'topic'",
    )


class Nav2Base:
    """Nav2's NavigateToPose action on robot.yaml's base.nav2_action.

    The goal goes through this node's own action client, so a namespaced Nav2 is
    reached by naming its action (/robot1/navigate_to_pose), the executor's callback
    threads deliver the result, and a cancel or the drive's deadline cancels the goal
    on Nav2 at once. (nav2_simple_commander's BasicNavigator spins a node of its own
    and waits without a timeout for the server and for the goal's acceptance, so
    neither a cancel nor a deadline could interrupt it.)
    """

    def __init__(
        self,
        node: Node,
        config: BaseConfig,
        timeouts: Timeouts,
        callback_group: CallbackGroup | None = None,
        *,
        action_type: Any | None = None,
        client: Any | None = None,
    ) -> None:
        self.node = node
        self.config = config
        self.timeouts = timeouts
        self.action_type = action_type or import_navigate_to_pose()
        self.client = action_client(
            node, self.action_type, config.nav2_action, callback_group, client
        )
        self.description = f"Nav2 base (NavigateToPose on {config.nav2_action})"

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> MotionResult:
        goal = self.action_type.Goal()
        goal.pose = pose_stamped(pose, self.config.frame_id, self.node.get_clock().now().to_msg())
        goal.behavior_tree = ""  # Nav2's default navigate-to-pose tree
        outcome, result = run_action(
            self.client,
            goal,
            server=self.config.nav2_action,
            kind="NavigateToPose",
            cancel=cancel,
            server_s=self.timeouts.server_s,
            motion_s=self.timeouts.navigate_s,
            hint="is Nav2 running and active? A namespaced Nav2 needs its namespace in "
            "robot.yaml base.nav2_action",
        )
        if outcome.ok:
            return MotionResult.success(f"reached {name} (Nav2)")
        if outcome.status is Status.CANCELED:
            return MotionResult.canceled(f"drive to {name} canceled (Nav2 goal canceled)")
        code = getattr(result, "error_code", 0) if result is not None else 0
        detail = f": error {code} {getattr(result, 'error_msg', '')}".rstrip() if code else ""
        return MotionResult.failure(f"Nav2 did not reach {name}: {outcome.message}{detail}")
