"""Pick and build the backends for a profile, from the executor's parameters.

`auto` follows the profile: the real robot drives with Nav2 and moves the UR5e and the
Hand-E through their action servers; sim_world and the Gazebo profile's base
controller serve the base's goal topic. An action backend asked for where control_msgs
is missing, or Nav2 where nav2_msgs is missing, fails at start-up naming the apt
package, not at the first step.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.arm import ActionArm, SpeedScaling, TopicArm
from cowp_ros.ros.skill_backends.base import Nav2Base, TopicBase
from cowp_ros.ros.skill_backends.camera import DetectionCamera
from cowp_ros.ros.skill_backends.common import JointStateCache, Timeouts
from cowp_ros.ros.skill_backends.gripper import CommandGripper, ParallelGripper, TopicGripper
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.runner import Backends

PROFILES = ("sim", "gazebo", "robot")
BASE_CHOICES = ("auto", "topic", "nav2")
ARM_CHOICES = ("auto", "topic", "action")
# action: ParallelGripperCommand (Kilted); gripper_command: the older GripperCommand.
GRIPPER_CHOICES = ("auto", "topic", "action", "gripper_command")


@dataclass(frozen=True)
class Choice:
    base: str
    arm: str
    gripper: str


def control_msgs_available() -> bool:
    return importlib.util.find_spec("control_msgs") is not None


def nav2_msgs_available() -> bool:
    return importlib.util.find_spec("nav2_msgs") is not None


def check_choice(parameter: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise CowpError(f"parameter {parameter} is '{value}'; allowed values: {', '.join(allowed)}")
    return value


def resolve_choice(
    profile: str, base: str, arm: str, gripper: str, *, has_control_msgs: bool
) -> Choice:
    """Validate the parameters and replace `auto` by the profile's backend."""
    check_choice("profile", profile, PROFILES)
    check_choice("base_backend", base, BASE_CHOICES)
    check_choice("arm_backend", arm, ARM_CHOICES)
    check_choice("gripper_backend", gripper, GRIPPER_CHOICES)
    actions = "action" if profile != "sim" and has_control_msgs else "topic"
    return Choice(
        base=("nav2" if profile == "robot" else "topic") if base == "auto" else base,
        arm=actions if arm == "auto" else arm,
        gripper=actions if gripper == "auto" else gripper,
    )


def build_backends(
    node: Node,
    robot: RobotConfig,
    choice: Choice,
    timeouts: Timeouts,
    callback_group: CallbackGroup | None,
    *,
    verify_detections: bool,
) -> Backends:
    """Create the chosen backends on `node` (subscriptions share one joint-state cache
    when the arm and the gripper read the same topic)."""
    arm_joints = JointStateCache(node, robot.arm.joint_states_topic, callback_group)
    gripper_joints = (
        arm_joints
        if robot.gripper.joint_states_topic == robot.arm.joint_states_topic
        else JointStateCache(node, robot.gripper.joint_states_topic, callback_group)
    )
    base = (
        Nav2Base(node, robot.base, timeouts, callback_group)
        if choice.base == "nav2"
        else TopicBase(node, robot.base, timeouts, callback_group)
    )
    scaling = (
        SpeedScaling(node, robot.arm.speed_scaling_topic, callback_group)
        if robot.arm.speed_scaling_topic
        else None
    )
    arm = (
        ActionArm(node, robot.arm, timeouts, arm_joints, callback_group, scaling=scaling)
        if choice.arm == "action"
        else TopicArm(node, robot.arm, timeouts, arm_joints, scaling)
    )
    gripper: Any
    if choice.gripper == "action":
        gripper = ParallelGripper(node, robot.gripper, timeouts, gripper_joints, callback_group)
    elif choice.gripper == "gripper_command":
        gripper = CommandGripper(node, robot.gripper, timeouts, gripper_joints, callback_group)
    else:
        gripper = TopicGripper(node, robot.gripper, timeouts, gripper_joints)
    camera = (
        DetectionCamera(node, robot.camera.detections_topic, timeouts, callback_group)
        if verify_detections
        else None
    )
    return Backends(base=base, arm=arm, gripper=gripper, camera=camera)
