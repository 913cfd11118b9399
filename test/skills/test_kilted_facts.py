"""The backends, config/ and package.xml held to the upstream Kilted facts.

docs/kilted_interfaces.md records, with sources, the interface types, fields, topic and
action names and controller names that the robot backends rely on and that nothing on
this machine can install. Each check here ties one of our values to one of those facts,
so a value that drifts from upstream (a removed controller, a renamed action, a message
field that does not exist, a dependency rosdep cannot resolve) fails a test.
"""

from __future__ import annotations

from pathlib import Path

import kilted_facts
import pytest
import yaml
from catkin_pkg.package import parse_package

from cowp_ros.bringup.doctor import CONTROL_MSGS_APT, NAV2_MSGS_APT, apt_name
from cowp_ros.ros.skill_backends import arm, base, gripper
from cowp_ros.skills.config import RobotConfig

ROOT = Path(__file__).resolve().parents[2]


def test_every_fact_names_its_source() -> None:
    facts = kilted_facts.facts()
    assert len(facts) > 60
    for fact in facts.values():
        assert fact.values, f"{fact.key} has no value"
        assert fact.source_parts(), f"{fact.key}: source must be 'owner/repo @ branch: file'"


def action_name(key: str) -> tuple[str, str]:
    package, kind, name = kilted_facts.fact(key).value.split("/")
    assert kind == "action"
    return package, name


def test_backends_use_the_upstream_action_types() -> None:
    assert action_name("ParallelGripperCommand.type") == (
        "control_msgs",
        gripper.ParallelGripper.ACTION,
    )
    assert gripper.CommandGripper.ACTION == "GripperCommand"
    assert action_name("NavigateToPose.type") == ("nav2_msgs", "NavigateToPose")
    assert base.NAV2_APT_PACKAGE == NAV2_MSGS_APT == apt_name("nav2_msgs")
    assert arm.CONTROL_MSGS_APT_PACKAGE == CONTROL_MSGS_APT == apt_name("control_msgs")


def test_the_result_fields_the_backends_read_exist_upstream() -> None:
    parallel = kilted_facts.fields("ParallelGripperCommand.result")
    assert parallel["stalled"] == "bool" and parallel["reached_goal"] == "bool"
    assert parallel["state"] == "sensor_msgs/JointState"
    assert kilted_facts.fields("ParallelGripperCommand.goal") == {
        "command": "sensor_msgs/JointState"
    }
    assert set(kilted_facts.fields("NavigateToPose.result")) == {"error_code", "error_msg"}
    follow = kilted_facts.fields("FollowJointTrajectory.result")
    assert set(follow) == {"error_code", "error_string"}
    assert kilted_facts.fact("FollowJointTrajectory.SUCCESSFUL").value == "0"


def test_gripper_config_matches_the_kilted_controller_and_the_hand_e(robot: RobotConfig) -> None:
    g = robot.gripper
    assert g.controller == kilted_facts.fact("hande.controller_name").value
    suffix = kilted_facts.fact("parallel_gripper.action").value
    assert suffix.startswith("~/")
    assert g.gripper_action == f"/{g.controller}/{suffix[2:]}"
    assert g.finger_joint == kilted_facts.fact("hande.finger_joint").value
    low, high = (float(v) for v in kilted_facts.fact("hande.finger_range_m").values)
    assert (g.closed_position_m, g.open_position_m) == (low, high)


def test_arm_config_matches_the_ur_driver(robot: RobotConfig) -> None:
    a = robot.arm
    assert a.controller == kilted_facts.fact("ur.default_trajectory_controller").value
    # The UR driver runs with tf_prefix:=ur_ (docs/robot.md), so its joints carry it.
    assert "tf_prefix" in kilted_facts.fact("ur.launch_arguments").values
    assert list(a.joint_names) == [f"ur_{j}" for j in kilted_facts.fact("ur.joints").values]
    topic, action = kilted_facts.fact("joint_trajectory_controller.interfaces").values
    assert a.trajectory_topic == f"/{a.controller}/{topic.removeprefix('~/')}"
    assert a.follow_joint_trajectory_action == action.replace("<controller>", f"/{a.controller}")
    assert a.speed_scaling_topic == kilted_facts.fact("ur.speed_scaling_topic").value
    assert kilted_facts.fact("ur.speed_scaling_type").value == "std_msgs/msg/Float64"
    assert float(kilted_facts.fact("ur.speed_scaling_full").value) == arm.SPEED_SCALING_FULL


def test_nav2_action_is_bt_navigators(robot: RobotConfig) -> None:
    name = kilted_facts.fact("nav2.action").value
    assert robot.base.nav2_action.endswith(f"/{name}")


def test_bringup_spec_names_the_kilted_driver_processes() -> None:
    spec = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    ur = spec["nodes"]["ur_driver"]
    assert f"{ur['package']}/{ur['executable']}" == kilted_facts.fact("ur.control_node").value
    arm_config = yaml.safe_load((ROOT / "config" / "robot.yaml").read_text())["arm"]
    assert ur["ready"] == {"action": arm_config["follow_joint_trajectory_action"]}


def test_no_configuration_uses_a_controller_kilted_removed() -> None:
    removed = kilted_facts.fact("ros2_controllers.removed_gripper_types").values
    files = [*(ROOT / "config").rglob("*.yaml"), *(ROOT / "config").rglob("*.xacro")]
    files += [*(ROOT / "launch").glob("*.py")]
    for path in files:
        text = path.read_text()
        for controller_type in removed:
            assert controller_type not in text, f"{path} uses {controller_type}"
    for line in (ROOT / "docs" / "robot.md").read_text().splitlines():
        if any(t in line for t in removed):
            assert "removed" in line, f"docs/robot.md recommends a removed controller: {line}"


@pytest.mark.parametrize("environment", [{}, {"COWP_WITHOUT_GAZEBO": "1"}])
def test_package_xml_keys_all_resolve_on_kilted(environment: dict[str, str]) -> None:
    package = parse_package(ROOT / "package.xml")
    package.evaluate_conditions(environment)
    keys = {
        dep.name
        for group in (
            package.buildtool_depends,
            package.build_depends,
            package.exec_depends,
            package.test_depends,
        )
        for dep in group
        if dep.evaluated_condition
    }
    valid = set(kilted_facts.fact("rosdep.kilted_ros_packages").values)
    valid |= set(kilted_facts.fact("rosdep.python_keys").values)
    valid.add("cowp_interfaces")  # built beside it, from this repository
    assert keys <= valid, f"not Kilted rosdep keys: {sorted(keys - valid)}"
    assert not keys & set(kilted_facts.fact("rosdep.not_keys").values)
    needed = {"launch_ros", "control_msgs", "nav2_msgs", "python3-numpy", "python3-opencv"}
    assert needed <= keys
    gazebo = {"ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "ur_description"}
    assert (gazebo <= keys) == (environment.get("COWP_WITHOUT_GAZEBO") != "1")


def test_package_xml_declares_every_package_a_launch_file_needs() -> None:
    spec = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    launch_packages = {p for e in spec["profiles"].values() for p in e.get("launch_packages", [])}
    package = parse_package(ROOT / "package.xml")
    assert launch_packages <= {dep.name for dep in package.exec_depends}
