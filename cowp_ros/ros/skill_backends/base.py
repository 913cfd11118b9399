"""Mobile base backends: a goal topic watched on odometry, or Nav2's BasicNavigator.

The topic backend is what sim_world and a bare Gazebo base serve (robot.yaml
base.goal_topic / base.odom_topic); arrival is judged here, on odometry, so a base
that ignores the goal is caught by the deadline and a silent /odom by its name. The
Nav2 backend hides NavigateToPose behind nav2_simple_commander, imported only when
chosen, since Nav2 is not installable everywhere this code runs.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.common import (
    POLL_S,
    Signal,
    Timeouts,
    WaitEnd,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.skills.config import BaseConfig
from cowp_ros.skills.interfaces import Outcome, Pose2D

NAV2_APT_PACKAGE = "ros-kilted-nav2-simple-commander"


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

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> Outcome:
        topic = self.config.goal_topic
        end = wait_for_subscriber(
            self.publisher.get_subscription_count, cancel=cancel, timeout_s=self.timeouts.server_s
        )
        if end is WaitEnd.CANCELED:
            return Outcome.canceled(f"canceled before driving to {name}")
        if end is not WaitEnd.DONE:
            return Outcome.failure(
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
            return Outcome.success(f"reached {name}")
        if end is WaitEnd.SILENT:
            return Outcome.failure(
                silent_message(self.config.odom_topic, "nav_msgs/Odometry", self.timeouts.topic_s)
            )
        self._stop()
        if end is WaitEnd.CANCELED:
            return Outcome.canceled(f"drive to {name} canceled; base stopped")
        current = self.pose
        gap = (
            f"{current.distance_to(pose):.2f} m and {current.yaw_error_to(pose):.2f} rad away"
            if current
            else "position unknown"
        )
        return Outcome.failure(
            f"did not reach {name} within {self.timeouts.navigate_s:g} s ({gap}); base stopped"
        )

    def _stop(self) -> None:
        """A goal at the current pose: the simplest stop every goal-topic base honours."""
        current = self.pose
        if current is not None:
            self.publisher.publish(
                pose_stamped(current, self.config.frame_id, self.node.get_clock().now().to_msg())
            )


def import_basic_navigator() -> Callable[[], Any]:
    """nav2_simple_commander's BasicNavigator class, or a CowpError saying what to install."""
    try:
        from nav2_simple_commander.robot_navigator import BasicNavigator
    except ImportError as err:
        raise CowpError(
            "the Nav2 base backend needs nav2_simple_commander, which is not installed",
            hint=f"sudo apt install {NAV2_APT_PACKAGE} (and source /opt/ros/kilted), or "
            "set the executor's base_backend parameter to 'topic'",
        ) from err
    return BasicNavigator


class Nav2Base:
    """Nav2's NavigateToPose through nav2_simple_commander.BasicNavigator.

    BasicNavigator is its own node and spins itself inside its calls, so it is never
    added to the executor; this backend polls isTaskComplete from the calling thread.
    Its goToPose waits for the action server forever, so the server is checked here
    first, with a timeout.
    """

    def __init__(
        self,
        config: BaseConfig,
        timeouts: Timeouts,
        navigator_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.config = config
        self.timeouts = timeouts
        self.description = f"Nav2 base (BasicNavigator, {config.nav2_action})"
        self.navigator = (navigator_factory or import_basic_navigator())()

    def _server_ready(self) -> bool:
        client = getattr(self.navigator, "nav_to_pose_client", None)
        if client is None:  # an API without the attribute: let goToPose wait
            return True
        return bool(client.wait_for_server(timeout_sec=self.timeouts.server_s))

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> Outcome:
        nav = self.navigator
        if cancel.is_set():
            return Outcome.canceled(f"canceled before driving to {name}")
        if not self._server_ready():
            return Outcome.failure(
                f"Nav2 action server {self.config.nav2_action} not available within "
                f"{self.timeouts.server_s:g} s (is Nav2 running and active?)"
            )
        stamp = nav.get_clock().now().to_msg() if hasattr(nav, "get_clock") else None
        task = nav.goToPose(pose_stamped(pose, self.config.frame_id, stamp))
        if task is None or task is False:
            return Outcome.failure(f"Nav2 rejected the goal to {name}")
        # Newer BasicNavigators return a RunningTask to pass back; older ones a bool.
        kwargs = {} if isinstance(task, bool) else {"task": task}
        deadline = time.monotonic() + self.timeouts.navigate_s
        while not nav.isTaskComplete(**kwargs):
            if cancel.is_set():
                nav.cancelTask()
                return Outcome.canceled(f"drive to {name} canceled (Nav2 task canceled)")
            if time.monotonic() >= deadline:
                nav.cancelTask()
                return Outcome.failure(
                    f"Nav2 did not reach {name} within {self.timeouts.navigate_s:g} s; "
                    "task canceled"
                )
            time.sleep(POLL_S)
        result = nav.getResult()
        verdict = getattr(result, "name", str(result))
        if verdict == "SUCCEEDED":
            return Outcome.success(f"reached {name} (Nav2)")
        if verdict == "CANCELED":
            return Outcome.canceled(f"Nav2 canceled the drive to {name}")
        detail = ""
        if hasattr(nav, "getTaskError"):
            code, text = nav.getTaskError()
            detail = f": error {code} {text}".rstrip()
        return Outcome.failure(f"Nav2 failed to reach {name} ({verdict}){detail}")
