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

from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data

from cowp_ros.ros.skill_backends.common import (
    Signal,
    Timeouts,
    action_client,
    import_action_type,
    motion_result,
    ready_to_send,
    run_action,
    silent_message,
    wait_for_subscriber,
    wait_until,
)
from cowp_ros.ros.skill_backends.tf_pose import TfTree
from cowp_ros.skills import arrival
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
        problem = ready_to_send(
            end,
            canceled=f"canceled before driving to {name}",
            missing=f"nothing subscribes to {topic} within {self.timeouts.server_s:g} s "
            "(is the base driver or sim_world running?)",
        )
        if problem is not None:
            return problem
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
        return motion_result(
            end,
            done=MotionResult.success(f"reached {name}"),
            silent=MotionResult.failure(
                silent_message(self.config.odom_topic, "nav_msgs/Odometry", self.timeouts.topic_s)
            ),
            stop=self._stop,
            canceled=f"drive to {name} canceled; base stopped",
            missed=lambda: self._missed(name, pose),
        )

    def _missed(self, name: str, pose: Pose2D) -> MotionResult:
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


class ArrivalCheck:
    """Where the base really stopped, read from TF after Nav2 said it arrived.

    Nav2's default goal checker accepts 0.25 m and 0.25 rad, five times robot.yaml's
    tolerance: at arm's reach 0.25 rad is 17 cm sideways, against the Hand-E's 50 mm
    stroke. So the executor reads the base's pose (base.frame_id -> base.pose_frame)
    and, when it is outside robot.yaml's tolerance, drives the rest once, slowly, on
    base.cmd_vel_topic (a holonomic base) while reading TF, then judges again.
    """

    # The command is renewed every 50 ms of wall time; its law is skills/arrival.py's.

    def __init__(self, node: Node, config: BaseConfig, timeouts: Timeouts, tree: TfTree) -> None:
        self.config = config
        self.timeouts = timeouts
        self.tf = tree
        self.publisher = (
            node.create_publisher(Twist, config.cmd_vel_topic, 10) if config.cmd_vel_topic else None
        )

    def _within(self, pose: Pose2D, goal: Pose2D, fraction: float = 1.0) -> bool:
        return arrival.within(
            pose, goal, self.config.position_tolerance_m, self.config.yaw_tolerance_rad, fraction
        )

    def _gap(self, pose: Pose2D, goal: Pose2D) -> str:
        return (
            f"{pose.distance_to(goal):.3f} m and {pose.yaw_error_to(goal):.3f} rad from it "
            f"(tolerance {self.config.position_tolerance_m:g} m, "
            f"{self.config.yaw_tolerance_rad:g} rad)"
        )

    def check(self, name: str, goal: Pose2D, cancel: threading.Event) -> MotionResult:
        frames = f"{self.config.frame_id} -> {self.config.pose_frame}"
        pose = self._read(cancel, time.monotonic())
        if cancel.is_set():
            return MotionResult.canceled(f"canceled while checking the arrival at {name}")
        if pose is None:
            return MotionResult.failure(
                f"Nav2 reported {name} reached, but TF gave no {frames} within "
                f"{self.timeouts.topic_s:g} s (is the TF tree published?)"
            )
        if self._within(pose, goal):
            return MotionResult.success(f"reached {name} (Nav2; {self._gap(pose, goal)})")
        if self.publisher is None:
            return MotionResult.failure(
                f"Nav2 reported {name} reached, but the base stopped {self._gap(pose, goal)}; "
                "no correction (robot.yaml base.cmd_vel_topic is empty)"
            )
        before = self._gap(pose, goal)
        corrected = self._correct(goal, cancel)
        self.publisher.publish(Twist())
        if cancel.is_set():
            return MotionResult.canceled(f"correction at {name} canceled; base stopped")
        if corrected is None:
            return MotionResult.failure(f"lost {frames} while correcting the stop at {name}")
        if self._within(corrected, goal):
            return MotionResult.success(
                f"reached {name} (Nav2 stopped {before}; corrected to {self._gap(corrected, goal)})"
            )
        return MotionResult.failure(
            f"the base stopped {before} and one correction left it {self._gap(corrected, goal)}"
        )

    def _correct(self, goal: Pose2D, cancel: threading.Event) -> Pose2D | None:
        """Drive toward `goal` on cmd_vel until well inside the tolerance, or for the
        topic timeout's worth of standing still, or the drive's deadline."""
        assert self.publisher is not None
        deadline = time.monotonic() + min(self.timeouts.navigate_s, 30.0)
        pose: Pose2D | None = None
        while time.monotonic() < deadline and not cancel.is_set():
            pose = self._read(cancel, time.monotonic() - 0.2)
            if pose is None:
                return None
            if self._within(pose, goal, arrival.AIM_FRACTION):
                break
            vx, vy, wz = arrival.correction(pose, goal)
            command = Twist()
            command.linear.x, command.linear.y, command.angular.z = vx, vy, wz
            self.publisher.publish(command)
            time.sleep(0.05)
        self.publisher.publish(Twist())
        time.sleep(0.3)  # let the base stop before the last reading
        return self._read(cancel, time.monotonic())

    def _read(self, cancel: threading.Event, fresher_than: float) -> Pose2D | None:
        return self.tf.wait_planar(
            self.config.pose_frame, self.timeouts.topic_s, cancel, fresher_than
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
        arrival: ArrivalCheck | None = None,
    ) -> None:
        self.node = node
        self.config = config
        self.timeouts = timeouts
        self.arrival = arrival
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
            if self.arrival is not None:
                return self.arrival.check(name, pose, cancel)
            return MotionResult.success(f"reached {name} (Nav2)")
        if outcome.status is Status.CANCELED:
            return MotionResult.canceled(f"drive to {name} canceled (Nav2 goal canceled)")
        code = getattr(result, "error_code", 0) if result is not None else 0
        detail = f": error {code} {getattr(result, 'error_msg', '')}".rstrip() if code else ""
        return MotionResult.failure(f"Nav2 did not reach {name}: {outcome.message}{detail}")
