"""base_controller: drive a velocity-commanded base to each goal pose, without a map.

The Gazebo robot's base is a differential drive that takes velocities (/cmd_vel); the
executor's topic base backend publishes goal poses (/goal_pose) and watches /odom. This
node closes that loop the simplest way that works in an empty-enough room: turn toward
the goal, drive to it, turn to its heading, stop. It plans no path and avoids nothing,
so the Gazebo profile runs without a map or Nav2 (the gazebo_nav2 profile uses Nav2).

Odometry is read as a pose in the goal's frame: true in Gazebo, where the robot starts
at the map origin and a static map -> odom transform is the identity. A new goal
replaces the current one; a goal at the current pose stops the base (that is how the
executor cancels a drive).

Subscribes goal_topic (geometry_msgs/PoseStamped) and odom_topic (nav_msgs/Odometry);
publishes cmd_vel_topic as geometry_msgs/TwistStamped (what Kilted's Nav2 and the
ros_gz bridge of config/gazebo/bridge.yaml use) or Twist (stamped: false).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data

from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, declare_parameters, positive


def wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


def yaw_of(q: Any) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


@dataclass(frozen=True)
class Gains:
    """Speeds, gains and tolerances of the goal follower (node parameters)."""

    max_linear_m_s: float = 0.4
    max_angular_rad_s: float = 0.8
    k_linear: float = 1.0
    k_angular: float = 2.0
    position_tolerance_m: float = 0.02
    yaw_tolerance_rad: float = 0.03
    # Turn in place first while the goal is further off the heading than this.
    turn_first_rad: float = 0.35


def follow(
    x: float, y: float, yaw: float, goal: tuple[float, float, float], gains: Gains
) -> tuple[float, float, bool]:
    """(linear, angular, arrived) for a robot at (x, y, yaw) driving to `goal`.

    Far from the goal: face it, then drive toward it while steering; at it: turn to
    the goal's heading. Speeds are proportional to the remaining error and capped.
    """
    gx, gy, gyaw = goal
    distance = math.hypot(gx - x, gy - y)
    if distance > gains.position_tolerance_m:
        bearing = wrap(math.atan2(gy - y, gx - x) - yaw)
        angular = max(-gains.max_angular_rad_s, min(gains.max_angular_rad_s,
                                                     gains.k_angular * bearing))  # fmt: skip
        if abs(bearing) > gains.turn_first_rad:
            return 0.0, angular, False
        linear = min(gains.max_linear_m_s, gains.k_linear * distance) * math.cos(bearing)
        return linear, angular, False
    heading = wrap(gyaw - yaw)
    if abs(heading) > gains.yaw_tolerance_rad:
        angular = max(-gains.max_angular_rad_s, min(gains.max_angular_rad_s,
                                                    gains.k_angular * heading))  # fmt: skip
        return 0.0, angular, False
    return 0.0, 0.0, True


PARAMETERS = (
    Param("goal_topic", "/goal_pose", "goal poses to drive to (geometry_msgs/PoseStamped)"),
    Param("odom_topic", "/odom", "odometry, read as a pose in the goals' frame"),
    Param("cmd_vel_topic", "/cmd_vel", "velocity commands for the base"),
    Param("stamped", True, "publish TwistStamped (Kilted's default) instead of Twist"),
    Param("base_frame", "base_footprint", "frame_id of the stamped velocity commands"),
    Param("rate_hz", 20.0, "control rate", positive),
    Param("max_linear_m_s", Gains.max_linear_m_s, "top forward speed", positive),
    Param("max_angular_rad_s", Gains.max_angular_rad_s, "top turning speed", positive),
    Param("k_linear", Gains.k_linear, "forward speed per metre of distance", positive),
    Param("k_angular", Gains.k_angular, "turning speed per radian of heading error", positive),
    Param(
        "position_tolerance_m",
        Gains.position_tolerance_m,
        "close enough to the goal position",
        positive,
    ),
    Param(
        "yaw_tolerance_rad", Gains.yaw_tolerance_rad, "close enough to the goal heading", positive
    ),
)


class BaseController(Node):
    """Goal pose in, velocity out; see the module docstring."""

    def __init__(self, **node_kwargs: Any) -> None:
        super().__init__("base_controller", **node_kwargs)
        value = declare_parameters(self, PARAMETERS)
        self.gains = Gains(
            max_linear_m_s=float(value["max_linear_m_s"]),
            max_angular_rad_s=float(value["max_angular_rad_s"]),
            k_linear=float(value["k_linear"]),
            k_angular=float(value["k_angular"]),
            position_tolerance_m=float(value["position_tolerance_m"]),
            yaw_tolerance_rad=float(value["yaw_tolerance_rad"]),
        )
        self.stamped = bool(value["stamped"])
        self.base_frame = str(value["base_frame"])
        self._lock = threading.Lock()
        self._goal: tuple[float, float, float] | None = None
        self._pose: tuple[float, float, float] | None = None
        self.publisher = self.create_publisher(
            TwistStamped if self.stamped else Twist, value["cmd_vel_topic"], 10
        )
        self.create_subscription(PoseStamped, value["goal_topic"], self.on_goal, 10)
        self.create_subscription(
            Odometry, value["odom_topic"], self.on_odom, qos_profile_sensor_data
        )
        self.create_timer(1.0 / float(value["rate_hz"]), self.step)
        self.get_logger().info(
            f"driving {value['cmd_vel_topic']} to goals on {value['goal_topic']} "
            f"by {value['odom_topic']} (up to {self.gains.max_linear_m_s:g} m/s)"
        )

    def on_goal(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        with self._lock:
            self._goal = (p.x, p.y, yaw_of(q))

    def on_odom(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        with self._lock:
            self._pose = (p.x, p.y, yaw_of(q))

    def step(self) -> None:
        with self._lock:
            goal, pose = self._goal, self._pose
        if goal is None or pose is None:
            return
        linear, angular, arrived = follow(*pose, goal, self.gains)
        self.publish(linear, angular)
        if arrived:
            with self._lock:
                if self._goal == goal:
                    self._goal = None  # stopped; wait for the next goal

    def publish(self, linear: float, angular: float) -> None:
        twist = Twist()
        twist.linear.x, twist.angular.z = float(linear), float(angular)
        if not self.stamped:
            self.publisher.publish(twist)
            return
        msg = TwistStamped(twist=twist)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.base_frame
        self.publisher.publish(msg)


def main(args: list[str] | None = None) -> None:
    run_node("base_controller", BaseController, args=args)


if __name__ == "__main__":
    main()
