"""sim_world: the embedded simulation that stands in for the robot and its world.

It serves the robot drivers' interfaces (base goal and odometry, the UR5e's joint
trajectory topic and joint states, the Hand-E's command topic and finger joint, the
wrist camera) with motions that take realistic time, so the executor and its skill
layer run exactly as on the robot. It also plays a scenario: when the executor announces
a step on `/cowp/current_step`, matching scenario events are published as situations on
`/cowp/situations`, the same topic the camera detector, a bag or a person would use.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from sensor_msgs.msg import Image, JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from cowp_interfaces.msg import PlanStep
from cowp_ros.errors import CowpError
from cowp_ros.resources import share_path
from cowp_ros.ros.clients.world_client import WORLD_OBJECTS_PARAMETER
from cowp_ros.ros.names import CURRENT_STEP_TOPIC
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, at_least, declare_parameters, positive
from cowp_ros.ros.scenario_events import ScenarioReporter
from cowp_ros.sim.camera_images import load_camera_image
from cowp_ros.sim.fake_robot import ArmSim, BaseSim, GripperSim
from cowp_ros.sim.scenario import Scenario, SimObject, load_scenario
from cowp_ros.sim.step_camera import StepCamera
from cowp_ros.skills.config import RobotConfig, load_robot_config
from cowp_ros.skills.object_shapes import OPENABLE


def _gripped(thing: SimObject) -> bool:
    """Whether closing fingers stop on it: a graspable object, or the handle of a fixture
    with a sliding front (a cupboard, opened by its handle)."""
    return thing.graspable or (thing.category in OPENABLE and not thing.attributes.get("missing"))


PARAMETERS = (
    Param("scenario", "serve_water_dirty_cup", "scenario name in config/scenarios/ or a YAML path"),
    Param("robot_config", "", "robot YAML ('' = config/robot.yaml)"),
    Param("rate_hz", 20.0, "motion, odometry and joint-state rate", positive),
    Param("camera_rate_hz", 2.0, "wrist camera frame rate", positive),
    Param("publish_camera", True, "stream the scenario's images on the camera topic"),
    Param("scenario_events", True, "publish the scenario's situations (off for replay)"),
    Param(
        "perceive_delay_s",
        0.5,
        "time from a step's start to its situation report",
        at_least(0.0),
    ),
    Param(
        "start_location",
        "charging_dock",
        "named location the base starts at ('' = the origin)",
    ),
)


class SimWorld(Node):
    def __init__(self) -> None:
        super().__init__("sim_world")
        params = declare_parameters(self, PARAMETERS)

        scenario_name = params["scenario"]
        robot_path = params["robot_config"]
        self.scenario: Scenario = load_scenario(scenario_name)
        self.robot: RobotConfig = load_robot_config(
            Path(robot_path) if robot_path else share_path("config", "robot.yaml")
        )
        sim_hints = self.robot.sim
        # What the world has, for whoever plans in it (the task manager reads it through
        # get_parameters; a person with `ros2 param get /sim_world world_objects`).
        self.declare_parameter(
            WORLD_OBJECTS_PARAMETER,
            sorted(self.scenario.objects),
            ParameterDescriptor(
                description="the objects of the scenario's world (set by the node)",
                read_only=True,
            ),
        )
        self.events = ScenarioReporter(
            self,
            self.scenario,
            delay_s=params["perceive_delay_s"],
            enabled=params["scenario_events"],
        )

        self.base = BaseSim(
            speed_mps=float(sim_hints.get("base_speed_m_s", 0.5)),
            turn_rate_rps=float(sim_hints.get("base_turn_speed_rad_s", 1.0)),
        )
        start = params["start_location"]
        if start:
            if start not in self.robot.base.locations:
                raise CowpError(
                    f"start_location '{start}' is not a location in {self.robot.path}",
                    hint=f"known: {', '.join(sorted(self.robot.base.locations))}",
                )
            pose = self.robot.base.locations[start]
            self.base.x, self.base.y, self.base.yaw = pose.x, pose.y, pose.yaw
        self.arm = ArmSim(list(self.robot.arm.joint_names), list(self.robot.arm.poses["home"]))
        self.grasp_stop_m = float(sim_hints.get("grasped_finger_position_m", 0.012))
        self.gripper = GripperSim(
            position=self.robot.gripper.open_position_m,
            max_position=self.robot.gripper.open_position_m,
            target=self.robot.gripper.open_position_m,
        )

        self.odom_pub = self.create_publisher(Odometry, self.robot.base.odom_topic, 10)
        self.joint_pub = self.create_publisher(JointState, self.robot.arm.joint_states_topic, 10)
        self.create_subscription(PoseStamped, self.robot.base.goal_topic, self.on_base_goal, 10)
        self.create_subscription(
            JointTrajectory, self.robot.arm.trajectory_topic, self.on_trajectory, 10
        )
        self.create_subscription(
            Float64MultiArray, self.robot.gripper.command_topic, self.on_gripper_command, 10
        )
        self.create_subscription(PlanStep, CURRENT_STEP_TOPIC, self.on_step, 10)

        self.dt = 1.0 / params["rate_hz"]
        self._last_tick = time.monotonic()
        self.create_timer(self.dt, self.tick)
        self.camera: StepCamera | None = None
        if params["publish_camera"]:
            self.camera_pub = self.create_publisher(Image, self.robot.camera.image_topic, 2)
            self.camera = StepCamera(self.scenario, load_camera_image)
            for origin in self.camera.origins:
                self.get_logger().info(f"camera image: {origin}")
            self.create_timer(1.0 / params["camera_rate_hz"], self.publish_frame)
        self.get_logger().info(
            f"scenario '{self.scenario.name}' for task '{self.scenario.task}': "
            f"{len(self.scenario.objects)} objects, {len(self.scenario.events)} events"
        )

    # ---------------------------------------------------------------- commands in
    def on_base_goal(self, msg: PoseStamped) -> None:
        q = msg.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        self.base.set_goal(msg.pose.position.x, msg.pose.position.y, yaw)

    def on_trajectory(self, msg: JointTrajectory) -> None:
        points = [
            (p.time_from_start.sec + p.time_from_start.nanosec * 1e-9, list(p.positions))
            for p in msg.points
        ]
        try:
            self.arm.follow(list(msg.joint_names), points)
        except ValueError:
            self.get_logger().error(
                f"trajectory names joints {list(msg.joint_names)}, expected {self.arm.joint_names}"
            )

    def on_gripper_command(self, msg: Float64MultiArray) -> None:
        if msg.data:
            self.gripper.command(float(msg.data[0]))

    def on_step(self, step: PlanStep) -> None:
        """A step starts: set what the gripper would close on, and queue scenario events."""
        arguments = list(step.arguments)
        touching = any(
            (thing := self.scenario.object(name)) is not None and _gripped(thing)
            for name in arguments
        )
        if touching:
            self.gripper.object_stop_m = self.grasp_stop_m
        elif self.gripper.target >= self.gripper.position - 1e-4:
            # open fingers hold nothing; closed ones keep what they hold on other steps
            self.gripper.object_stop_m = None
        self.events.on_step(step)
        if self.camera is not None:
            self.camera.on_step(step.action, arguments)

    # ------------------------------------------------------------------ state out
    def tick(self) -> None:
        """Advance the motion by the time that really passed (a late timer on a busy
        machine must not slow the simulated robot down), then publish its state."""
        now = time.monotonic()
        elapsed, self._last_tick = now - self._last_tick, now
        self.base.step(elapsed)
        self.arm.step(elapsed)
        self.gripper.step(elapsed)
        stamp = self.get_clock().now().to_msg()
        self.publish_odometry(stamp)
        joints = JointState()
        joints.header.stamp = stamp
        joints.name = [*self.arm.joint_names, self.robot.gripper.finger_joint]
        joints.position = [*self.arm.positions, self.gripper.position]
        self.joint_pub.publish(joints)
        self.events.publish_due()

    def publish_odometry(self, stamp: Time) -> None:
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = "odom"
        odom.child_frame_id = "base_link"
        odom.pose.pose.position.x = self.base.x
        odom.pose.pose.position.y = self.base.y
        odom.pose.pose.orientation.z = math.sin(self.base.yaw / 2)
        odom.pose.pose.orientation.w = math.cos(self.base.yaw / 2)
        odom.twist.twist.linear.x = self.base.vx
        odom.twist.twist.angular.z = self.base.wz
        self.odom_pub.publish(odom)

    def publish_frame(self) -> None:
        pixels = self.camera.frame() if self.camera is not None else None
        if pixels is None:
            return
        image = Image()
        image.header.stamp = self.get_clock().now().to_msg()
        image.header.frame_id = "wrist_camera_optical_frame"
        image.height, image.width = int(pixels.shape[0]), int(pixels.shape[1])
        image.encoding = "rgb8"
        image.step = image.width * 3
        image.data = pixels.tobytes()
        self.camera_pub.publish(image)


def main(args: list[str] | None = None) -> None:
    run_node("sim_world", SimWorld, args=args)


if __name__ == "__main__":
    main()
