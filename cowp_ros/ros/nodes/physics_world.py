"""physics_world: the robot and its kitchen in MuJoCo, served as the robot's drivers serve them.

The robot profile's executor talks to the UR driver (FollowJointTrajectory), the Hand-E's
controller (ParallelGripperCommand) and Nav2 (NavigateToPose); this node serves the same
actions, names and result codes over a physics world (cowp_ros/physics), and publishes
what the drivers and robot_state_publisher would: /joint_states, /odom, /tf, /clock
(for use_sim_time) and, when asked, the wrist camera. Objects are lifted by friction
only. The scenario's situations are reported as sim_world reports them. Every control
period the safety invariants are checked; on shutdown the node writes a report (the
invariants' violations, what became of each object, the real-time factor achieved).
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from pathlib import Path
from typing import Any

from geometry_msgs.msg import TransformStamped, Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from cowp_interfaces.msg import PlanStep
from cowp_ros.errors import CowpError
from cowp_ros.physics.navigation import NAV2_XY_GOAL_TOLERANCE, NAV2_YAW_GOAL_TOLERANCE
from cowp_ros.physics.safety import ObjectLog, SafetyMonitor
from cowp_ros.physics.scene import ARM_MOUNT, ARM_PREFIX, WHEEL_RADIUS
from cowp_ros.physics.stepping import SteppingThread
from cowp_ros.physics.world_setup import build_world
from cowp_ros.resources import share_path
from cowp_ros.ros.clients.world_client import WORLD_OBJECTS_PARAMETER
from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.names import CURRENT_STEP_TOPIC
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, at_least, declare_parameters, positive
from cowp_ros.ros.physics_drivers import GripperDriver, NavigationDriver, TrajectoryDriver
from cowp_ros.ros.scenario_events import ScenarioReporter
from cowp_ros.skills.config import load_robot_config

PARAMETERS = (
    Param("scenario", "serve_water_dirty_cup", "scenario name in config/scenarios/ or a YAML path"),
    Param("robot_config", "", "robot YAML ('' = config/robot.yaml)"),
    Param(
        "real_time_factor",
        1.0,
        "simulated seconds per wall-clock second at most (0 = as fast as the machine can)",
        at_least(0.0),
    ),
    Param("publish_rate_hz", 50.0, "joint states, odometry and TF rate (simulated time)", positive),
    Param(
        "camera_rate_hz", 0.0, "wrist camera frames per simulated second (0 = off)", at_least(0.0)
    ),
    Param(
        "depth_rate_hz",
        0.0,
        "wrist depth images per wall second (0 = off; robot.yaml camera.depth_topic)",
        at_least(0.0),
    ),
    Param("depth_width", 160, "wrist depth image width (pixels)", positive),
    Param("depth_height", 120, "wrist depth image height (pixels)", positive),
    Param("camera_width", 320, "wrist camera image width (pixels)", positive),
    Param("camera_height", 240, "wrist camera image height (pixels)", positive),
    Param("xy_goal_tolerance", NAV2_XY_GOAL_TOLERANCE, "Nav2 goal checker: metres", positive),
    Param("yaw_goal_tolerance", NAV2_YAW_GOAL_TOLERANCE, "Nav2 goal checker: radians", positive),
    Param(
        "navigate_timeout_s", 120.0, "a NavigateToPose goal's limit (simulated seconds)", positive
    ),
    Param("scenario_events", True, "publish the scenario's situations"),
    Param(
        "perceive_delay_s", 0.5, "time from a step's start to its situation report", at_least(0.0)
    ),
    Param("start_location", "charging_dock", "named location the base starts at"),
    Param("report_path", "", "where to write the run's physics report on shutdown ('' = none)"),
    Param("cmd_vel_timeout_s", 0.5, "stop the base when /cmd_vel is silent this long", positive),
    Param(
        "publish_object_poses",
        True,
        "publish each object's frame on /tf, as an object pose estimator would (false: the "
        "executor grasps from its calibrated poses)",
    ),
    Param(
        "faults",
        [""],
        "physical faults to inject: stop_anywhere (the base rests anywhere within the goal "
        "tolerance), abort_trajectory:N (the Nth arm goal aborted half-way)",
    ),
    Param("fault_seed", 0, "seed of the faults' random draws"),
)

FAULTS = ("stop_anywhere", "abort_trajectory")

TF_TOPIC = "/tf"


class PhysicsWorldNode(Node):
    def __init__(self) -> None:
        super().__init__("physics_world")
        params = declare_parameters(self, PARAMETERS)
        robot_path = params["robot_config"]
        self.robot = load_robot_config(
            Path(robot_path) if robot_path else share_path("config", "robot.yaml")
        )
        start = params["start_location"]
        if start not in self.robot.base.locations:
            raise CowpError(
                f"start_location '{start}' is not a location in {self.robot.path}",
                hint=f"known: {', '.join(sorted(self.robot.base.locations))}",
            )
        faults = parse_faults(list(params["faults"]))
        setup = build_world(params["scenario"], self.robot, start)
        self.publish_object_poses = bool(params["publish_object_poses"])
        self.scenario, self.world, self.layout = setup.scenario, setup.world, setup.layout
        self.declare_parameter(
            WORLD_OBJECTS_PARAMETER,
            sorted(self.scenario.objects),
            ParameterDescriptor(
                description="the objects of the scenario's world (set by the node)",
                read_only=True,
            ),
        )
        self.report_path = params["report_path"]
        self.monitor = SafetyMonitor()
        self.objects = ObjectLog()
        self.objects.start(self.world, [o.name for o in self.layout.objects])
        self.publish_period = 1.0 / params["publish_rate_hz"]
        self._next_publish = 0.0
        self._cmd_vel_at = -math.inf
        self.cmd_vel_timeout_s = params["cmd_vel_timeout_s"]

        self.joint_pub = self.create_publisher(JointState, self.robot.arm.joint_states_topic, 10)
        self.odom_pub = self.create_publisher(Odometry, self.robot.base.odom_topic, 10)
        self.tf_pub = self.create_publisher(_tf_message_type(), TF_TOPIC, 100)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        static_qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.tf_static_pub = self.create_publisher(_tf_message_type(), "/tf_static", static_qos)
        self.events = ScenarioReporter(
            self,
            self.scenario,
            delay_s=params["perceive_delay_s"],
            enabled=params["scenario_events"],
            clock=lambda: self.world.time,  # simulated seconds, whatever the pace
        )
        group = ReentrantCallbackGroup()
        self.stepping = SteppingThread(
            self.world, real_time_factor=params["real_time_factor"], hooks=[self._after_period]
        )
        self.trajectory = TrajectoryDriver(
            self, self.stepping, self.robot.arm.follow_joint_trajectory_action, group,
            abort_goal=int(faults.get("abort_trajectory", 0)),
        )  # fmt: skip
        self.gripper = GripperDriver(
            self, self.stepping, self.robot.gripper.gripper_action, group, self.robot.gripper
        )
        self.navigation = NavigationDriver(
            self, self.stepping, self.robot.base.nav2_action, group, setup.planner,
            xy_tolerance=params["xy_goal_tolerance"],
            yaw_tolerance=params["yaw_goal_tolerance"],
            timeout_s=params["navigate_timeout_s"],
            stop_anywhere=(
                random.Random(params["fault_seed"]) if "stop_anywhere" in faults else None
            ),
        )  # fmt: skip
        self.create_subscription(Twist, "/cmd_vel", self.on_cmd_vel, 10, callback_group=group)
        self.create_subscription(PlanStep, CURRENT_STEP_TOPIC, self.events.on_step, 10)
        self.create_timer(0.01, self.events.publish_due)
        self.camera = None
        if params["camera_rate_hz"] > 0:
            from cowp_ros.ros.physics_camera import WristCameraPublisher

            self.camera = WristCameraPublisher(
                self, self.stepping, self.robot.camera.image_topic,
                rate_hz=params["camera_rate_hz"],
                size=(params["camera_width"], params["camera_height"]),
            )  # fmt: skip
        self.depth = None
        if params["depth_rate_hz"] > 0:
            from cowp_ros.ros.physics_camera import WristDepthPublisher

            camera = self.robot.camera
            if not camera.depth_topic:
                raise CowpError(
                    f"depth_rate_hz is set but {self.robot.path} names no camera.depth_topic"
                )
            self.depth = WristDepthPublisher(
                self, self.stepping, camera.depth_topic, camera.depth_info_topic,
                camera.optical_frame,
                rate_hz=params["depth_rate_hz"],
                size=(params["depth_width"], params["depth_height"]),
            )  # fmt: skip
        self._publish_static()
        self.stepping.start()
        self.get_logger().info(
            f"scenario '{self.scenario.name}' for task '{self.scenario.task}': "
            f"{len(self.layout.objects)} objects on {len(self.layout.surfaces)} surfaces; "
            f"real-time factor {params['real_time_factor']:g}; serving "
            f"{self.robot.arm.follow_joint_trajectory_action}, "
            f"{self.robot.gripper.gripper_action}, {self.robot.base.nav2_action}"
        )

    # ----------------------------------------------------------------- inputs
    def on_cmd_vel(self, msg: Twist) -> None:
        """A velocity command (the executor's fine approach, a teleop): ignored while Nav2
        drives the base, which it owns then."""
        if self.navigation.active.is_set():
            return
        with self.stepping.lock:
            self.world.command_base(msg.linear.x, msg.linear.y, msg.angular.z)
            self._cmd_vel_at = time.monotonic()

    # ------------------------------------------------------- every control period
    def _after_period(self) -> None:
        """Runs in the stepping thread with the world locked."""
        world = self.world
        # held to robot.yaml's grip force: a goal whose effort is in the wrong unit shows
        self.monitor.check(world, self.robot.gripper.max_effort_n)
        known = len(self.objects.releases)
        self.objects.update(world)
        for release in self.objects.releases[known:]:
            self.get_logger().info(release)
        if (
            not self.navigation.active.is_set()
            and time.monotonic() - self._cmd_vel_at > self.cmd_vel_timeout_s
            and world.base_command != (0.0, 0.0, 0.0)
        ):
            world.command_base(0.0, 0.0, 0.0)
        if world.time + 1e-9 < self._next_publish:
            return
        self._next_publish = world.time + self.publish_period
        stamp = _stamp(world.time)
        self.clock_pub.publish(Clock(clock=stamp))
        joints = JointState()
        joints.header.stamp = stamp
        finger = self.robot.gripper.finger_joint
        joints.name = [*self.robot.arm.joint_names, finger]
        joints.position = [*world.arm_positions(), world.finger_position()]
        joints.velocity = [*world.arm_velocities(), world.finger_velocity()]
        self.joint_pub.publish(joints)
        pose = world.base_pose()
        vx, vy, wz = world.base_velocity()
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = "odom"
        odom.child_frame_id = "base_footprint"
        odom.pose.pose.position.x, odom.pose.pose.position.y = pose.x, pose.y
        odom.pose.pose.orientation.z = math.sin(pose.yaw / 2)
        odom.pose.pose.orientation.w = math.cos(pose.yaw / 2)
        odom.twist.twist.linear.x, odom.twist.twist.linear.y = vx, vy
        odom.twist.twist.angular.z = wz
        self.odom_pub.publish(odom)
        transforms = [_transform(stamp, "odom", "base_footprint", pose.x, pose.y, 0.0, pose.yaw)]
        # the objects and the sliding fronts (a cupboard's frame is its front's, which
        # moves as it opens), as a pose estimator would publish them
        bodies = [o.name for o in self.layout.objects] + [f.name for f in self.layout.fronts]
        bodies += [fixture[0] for fixture in self.layout.fixtures]  # a faucet
        for name in bodies if self.publish_object_poses else ():
            position, quat = world.body_pose(name)
            transforms.append(_transform_q(stamp, "map", name, position, quat))
        if self.depth is not None:  # the depth image's frame, where the hand has it
            position, quat = world.optical_frame()
            frame = self.robot.camera.optical_frame
            transforms.append(_transform_q(stamp, "map", frame, position, quat))
        self.tf_pub.publish(_tf_message_type()(transforms=transforms))

    def _publish_static(self) -> None:
        stamp = _stamp(self.world.time)
        mx, my, mz = ARM_MOUNT
        # what robot_state_publisher would say of the fixed joints (cowp_robot.urdf.xacro)
        fixed = [
            _transform(stamp, "map", "odom", 0.0, 0.0, 0.0, 0.0),
            _transform(stamp, "base_footprint", "base_link", 0.0, 0.0, WHEEL_RADIUS, 0.0),
            _transform(stamp, "base_link", f"{ARM_PREFIX}base_link", mx, my, mz, 0.0),
        ]
        self.tf_static_pub.publish(_tf_message_type()(transforms=fixed))

    # --------------------------------------------------------------- shutdown
    def report(self) -> dict[str, Any]:
        with self.stepping.lock:
            return {
                "scenario": self.scenario.name,
                "simulated_s": round(self.world.time, 3),
                "real_time_factor": round(self.stepping.achieved_factor(), 3),
                "safety_checks": self.monitor.checks,
                "violations": [vars(v) for v in self.monitor.violations],
                "objects": self.objects.summary(),
                "releases": list(self.objects.releases),
                "opened_m": {
                    front.name: round(self.world.slide_position(front.name), 4)
                    for front in self.layout.fronts
                },
            }

    def on_shutdown(self) -> None:
        self.stepping.stop()
        if self.camera is not None:
            self.camera.stop()
        if self.depth is not None:
            self.depth.stop()
        report = self.report()
        for violation in report["violations"]:
            self.get_logger().error(f"safety: {violation['rule']}: {violation['detail']}")
        if self.report_path:
            path = Path(self.report_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(report, indent=2))
        self.get_logger().info(
            f"{report['simulated_s']} s simulated at {report['real_time_factor']}x real time; "
            f"{len(report['violations'])} safety violations"
        )


def parse_faults(entries: list[str]) -> dict[str, str]:
    """`faults` entries (NAME or NAME:VALUE) by name; an unknown one is refused."""
    found: dict[str, str] = {}
    for entry in entries:
        if not entry.strip():
            continue
        name, _, value = entry.strip().partition(":")
        if name not in FAULTS:
            raise CowpError(
                f"unknown physics fault '{name}'", hint=f"known faults: {', '.join(FAULTS)}"
            )
        if name == "abort_trajectory" and not value.isdigit():
            raise CowpError("abort_trajectory needs the goal's number: abort_trajectory:N")
        found[name] = value
    return found


def _tf_message_type() -> Any:
    from tf2_msgs.msg import TFMessage

    return TFMessage


def _stamp(seconds: float) -> Any:
    from builtin_interfaces.msg import Time

    whole = int(seconds)
    return Time(sec=whole, nanosec=min(999_999_999, round((seconds - whole) * 1e9)))


def _transform(
    stamp: Any, parent: str, child: str, x: float, y: float, z: float, yaw: float
) -> TransformStamped:
    t = TransformStamped()
    t.header.stamp, t.header.frame_id, t.child_frame_id = stamp, parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = x, y, z
    t.transform.rotation.z, t.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return t


def _transform_q(stamp: Any, parent: str, child: str, position: Any, quat: Any) -> TransformStamped:
    t = TransformStamped()
    t.header.stamp, t.header.frame_id, t.child_frame_id = stamp, parent, child
    tr, rot = t.transform.translation, t.transform.rotation
    tr.x, tr.y, tr.z = (float(v) for v in position)
    rot.w, rot.x, rot.y, rot.z = (float(v) for v in quat)
    return t


def main(args: list[str] | None = None) -> None:
    threading.current_thread().name = "physics_world"
    run_node("physics_world", PhysicsWorldNode, SteadyMultiThreadedExecutor, args=args)


if __name__ == "__main__":
    main()
