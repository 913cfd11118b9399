"""Build the backends the executor's parameters choose, by the declared names.

Which backends exist, what `auto` becomes on each profile and what each needs installed
is declared once, ROS-free, in `cowp_ros.skills.backends` (the doctor reads the same
declarations). Here each declared name gets its builder. An action backend asked for
where control_msgs is missing, or Nav2 where nav2_msgs is missing, fails at start-up
naming the apt package, not at the first step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.arm import ActionArm, SpeedScaling, TopicArm
from cowp_ros.ros.skill_backends.base import ArrivalCheck, Nav2Base, TopicBase
from cowp_ros.ros.skill_backends.camera import DetectionCamera
from cowp_ros.ros.skill_backends.common import JointStateCache, Timeouts
from cowp_ros.ros.skill_backends.gripper import CommandGripper, ParallelGripper, TopicGripper
from cowp_ros.ros.skill_backends.tf_pose import TfPoses, TfTree
from cowp_ros.skills.backends import Choice, Part
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.interfaces import Backends

if TYPE_CHECKING:
    from cowp_ros.ros.skill_backends.box_locator import RosBoxLocator
    from cowp_ros.ros.skill_backends.depth_locator import RosDepthLocator


@dataclass(frozen=True)
class BuildContext:
    """What every builder may use: the node, the robot contract, the shared caches."""

    node: Node
    robot: RobotConfig
    timeouts: Timeouts
    callback_group: CallbackGroup | None
    arm_joints: JointStateCache
    gripper_joints: JointStateCache
    tf: TfTree | None  # None where tf2_msgs is not installed


Builder = Callable[[BuildContext], Any]
BUILDERS: dict[tuple[Part, str], Builder] = {}


def builds(part: Part, name: str) -> Callable[[Builder], Builder]:
    """Register the builder of the declared backend `part`/`name`."""

    def register(builder: Builder) -> Builder:
        BUILDERS[(part, name)] = builder
        return builder

    return register


@builds("base", "topic")
def _topic_base(c: BuildContext) -> TopicBase:
    return TopicBase(c.node, c.robot.base, c.timeouts, c.callback_group)


@builds("base", "nav2")
def _nav2_base(c: BuildContext) -> Nav2Base:
    if c.tf is None:
        raise CowpError(
            "the Nav2 base checks where the base stopped on /tf, and tf2_msgs is not installed",
            hint="sudo apt install ros-kilted-tf2-msgs (and source /opt/ros/kilted/setup.bash)",
        )
    arrival = ArrivalCheck(c.node, c.robot.base, c.timeouts, c.tf)
    return Nav2Base(c.node, c.robot.base, c.timeouts, c.callback_group, arrival=arrival)


def _speed_scaling(c: BuildContext) -> SpeedScaling | None:
    topic = c.robot.arm.speed_scaling_topic
    return SpeedScaling(c.node, topic, c.callback_group) if topic else None


@builds("arm", "topic")
def _topic_arm(c: BuildContext) -> TopicArm:
    return TopicArm(c.node, c.robot.arm, c.timeouts, c.arm_joints, _speed_scaling(c))


@builds("arm", "action")
def _action_arm(c: BuildContext) -> ActionArm:
    return ActionArm(
        c.node,
        c.robot.arm,
        c.timeouts,
        c.arm_joints,
        c.callback_group,
        scaling=_speed_scaling(c),
    )


@builds("gripper", "topic")
def _topic_gripper(c: BuildContext) -> TopicGripper:
    return TopicGripper(c.node, c.robot.gripper, c.timeouts, c.gripper_joints)


@builds("gripper", "action")
def _parallel_gripper(c: BuildContext) -> ParallelGripper:
    return ParallelGripper(c.node, c.robot.gripper, c.timeouts, c.gripper_joints, c.callback_group)


@builds("gripper", "gripper_command")
def _command_gripper(c: BuildContext) -> CommandGripper:
    return CommandGripper(c.node, c.robot.gripper, c.timeouts, c.gripper_joints, c.callback_group)


def build_backends(
    node: Node,
    robot: RobotConfig,
    choice: Choice,
    timeouts: Timeouts,
    callback_group: CallbackGroup | None,
    *,
    verify_detections: bool,
    detect_frames: int = 1,
    look_with_depth: bool = False,
    look_with_detections: bool = False,
    detection_classes: Mapping[str, str] | None = None,
) -> Backends:
    """Create the chosen backends on `node` (subscriptions share one joint-state cache
    when the arm and the gripper read the same topic)."""
    arm_joints = JointStateCache(node, robot.arm.joint_states_topic, callback_group)
    gripper_joints = (
        arm_joints
        if robot.gripper.joint_states_topic == robot.arm.joint_states_topic
        else JointStateCache(node, robot.gripper.joint_states_topic, callback_group)
    )
    tf = _tf_tree(node, robot, callback_group)
    context = BuildContext(node, robot, timeouts, callback_group, arm_joints, gripper_joints, tf)
    camera = (
        DetectionCamera(
            node, robot.camera.detections_topic, timeouts, callback_group, frames=detect_frames
        )
        if verify_detections
        else None
    )
    locator: RosDepthLocator | RosBoxLocator | None = None
    if look_with_depth:
        if tf is None or not robot.camera.depth_topic:
            raise CowpError(
                "look_with_depth needs TF (tf2_msgs) and robot.yaml camera.depth_topic",
                hint=f"set camera.depth_topic in {robot.path}, or look_with_depth:=false",
            )
        from cowp_ros.ros.skill_backends.depth_locator import RosDepthLocator

        locator = RosDepthLocator(
            node, robot.camera, tf, robot.surfaces.height, timeouts, callback_group
        )
    elif look_with_detections:
        if tf is None or not robot.camera.info_topic:
            raise CowpError(
                "look_with_detections needs TF (tf2_msgs) and robot.yaml camera.info_topic",
                hint=f"set camera.info_topic in {robot.path}, or look_with_detections:=false",
            )
        from cowp_ros.ros.skill_backends.box_locator import RosBoxLocator

        locator = RosBoxLocator(
            node,
            robot.camera,
            tf,
            robot.surfaces.height,
            timeouts,
            detection_classes or {},
            callback_group,
        )
    return Backends(
        base=BUILDERS[("base", choice.base)](context),
        arm=BUILDERS[("arm", choice.arm)](context),
        gripper=BUILDERS[("gripper", choice.gripper)](context),
        camera=camera,
        poses=None if tf is None else TfPoses(tf, robot.base.pose_frame),
        locator=locator,
    )


def _tf_tree(node: Node, robot: RobotConfig, group: CallbackGroup | None) -> TfTree | None:
    """One TF listener for every backend that reads poses (None without tf2_msgs: the
    topic backends and the calibrated poses need none)."""
    try:
        import tf2_msgs.msg  # noqa: F401
    except ImportError:
        return None
    return TfTree(node, robot.base.frame_id, group)
