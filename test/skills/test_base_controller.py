"""base_controller: goal poses to velocities, so the Gazebo profile's base moves without
a map. The control law alone, then the node in the loop with a unicycle that integrates
its TwistStamped commands, driven by the executor's real topic base backend."""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Iterator

import pytest
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.parameter import Parameter
from ros_fakes import RATE_S, RosHarness, elapsed_since

from cowp_ros.ros.nodes.base_controller import BaseController, Gains, follow
from cowp_ros.ros.skill_backends.base import TopicBase
from cowp_ros.ros.skill_backends.common import Timeouts
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.interfaces import Pose2D, Status

GAINS = Gains()


def test_a_goal_behind_the_robot_is_faced_first() -> None:
    linear, angular, arrived = follow(0.0, 0.0, 0.0, (-2.0, 0.1, 0.0), GAINS)
    assert linear == 0.0 and angular == pytest.approx(GAINS.max_angular_rad_s) and not arrived


def test_a_goal_ahead_is_driven_to_at_a_capped_speed() -> None:
    linear, angular, _ = follow(0.0, 0.0, 0.0, (3.0, 0.0, 0.0), GAINS)
    assert linear == pytest.approx(GAINS.max_linear_m_s) and angular == pytest.approx(0.0)
    slow, _, _ = follow(0.0, 0.0, 0.0, (0.1, 0.0, 0.0), GAINS)
    assert slow == pytest.approx(GAINS.k_linear * 0.1)


def test_at_the_goal_position_it_turns_to_the_goal_heading_then_stops() -> None:
    linear, angular, arrived = follow(1.0, 1.0, 0.0, (1.0, 1.0, math.pi / 2), GAINS)
    assert linear == 0.0 and angular > 0 and not arrived
    assert follow(1.0, 1.0, math.pi / 2, (1.0, 1.0, math.pi / 2), GAINS) == (0.0, 0.0, True)


class Unicycle(Node):
    """Integrates TwistStamped commands like Gazebo's DiffDrive; publishes odometry."""

    def __init__(self, harness: RosHarness, *, cmd_vel: str, odom: str) -> None:
        super().__init__("unicycle", context=harness.context)
        self.x = self.y = self.yaw = 0.0
        self.v = self.w = 0.0
        self.commands = 0
        self._lock = threading.Lock()
        self._last_tick = time.monotonic()
        self.create_subscription(TwistStamped, cmd_vel, self.on_cmd, 10)
        self.publisher = self.create_publisher(Odometry, odom, 10)
        self.create_timer(RATE_S, self.tick)

    def on_cmd(self, msg: TwistStamped) -> None:
        assert msg.header.frame_id == "base_footprint"
        with self._lock:
            self.v, self.w = msg.twist.linear.x, msg.twist.angular.z
            self.commands += 1

    def tick(self) -> None:
        with self._lock:
            dt = elapsed_since(self)  # real time, as Gazebo's physics keeps
            self.yaw += self.w * dt
            self.x += self.v * math.cos(self.yaw) * dt
            self.y += self.v * math.sin(self.yaw) * dt
            x, y, yaw = self.x, self.y, self.yaw
        msg = Odometry()
        msg.header.frame_id = "odom"
        msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = (
            math.sin(yaw / 2),
            math.cos(yaw / 2),
        )
        self.publisher.publish(msg)


@pytest.fixture
def loop(harness: RosHarness, robot: RobotConfig) -> Iterator[tuple[TopicBase, Unicycle]]:
    prefix = f"/t{time.monotonic_ns()}"
    topics = {name: f"{prefix}/{name}" for name in ("goal_pose", "odom", "cmd_vel")}
    unicycle = harness.add(Unicycle(harness, cmd_vel=topics["cmd_vel"], odom=topics["odom"]))
    controller = harness.add(
        BaseController(
            context=harness.context,
            parameter_overrides=[
                Parameter("goal_topic", value=topics["goal_pose"]),
                Parameter("odom_topic", value=topics["odom"]),
                Parameter("cmd_vel_topic", value=topics["cmd_vel"]),
                Parameter("max_linear_m_s", value=2.0),
                # Fast, but with the default k_angular: a proportional heading loop
                # stays stable while its period is under 2 / k_angular, so a control
                # timer held up for most of a second on a busy machine does not leave
                # the base circling its goal.
                Parameter("max_angular_rad_s", value=4.0),
            ],
        )
    )
    client = harness.node(f"executor_{time.monotonic_ns()}")
    config = dataclasses.replace(
        robot.base, goal_topic=topics["goal_pose"], odom_topic=topics["odom"]
    )
    backend = TopicBase(client, config, Timeouts(server_s=10.0, topic_s=5.0, navigate_s=30.0))
    yield backend, unicycle
    for node in (client, controller, unicycle):
        harness.remove(node)


@pytest.mark.ros
def test_the_executor_drives_the_base_to_named_locations_through_it(loop, robot) -> None:
    backend, unicycle = loop
    for name in ("counter", "table"):
        outcome = backend.go_to(name, robot.base.locations[name], threading.Event())
        assert outcome.ok, outcome.message
        goal = robot.base.locations[name]
        assert math.hypot(unicycle.x - goal.x, unicycle.y - goal.y) <= 0.05


@pytest.mark.ros
def test_a_canceled_drive_leaves_the_base_stopped(loop) -> None:
    backend, unicycle = loop
    cancel = threading.Event()
    box: list = []
    thread = threading.Thread(
        target=lambda: box.append(backend.go_to("far", Pose2D(8.0, 0.0, 0.0), cancel))
    )
    thread.start()
    deadline = time.monotonic() + 10
    while unicycle.x < 0.5 and time.monotonic() < deadline:
        time.sleep(0.01)
    cancel.set()
    thread.join(timeout=5)
    assert box and box[0].status is Status.CANCELED
    time.sleep(0.5)
    stopped_at = unicycle.x
    time.sleep(0.3)
    assert unicycle.x == pytest.approx(stopped_at, abs=0.01) and stopped_at < 3.0
