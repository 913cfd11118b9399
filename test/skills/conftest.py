"""Fixtures for the skill tests: the real config files, made quick, and a ROS harness."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from cowp_ros.skills.config import RobotConfig, load_robot_config
from cowp_ros.skills.roles import with_tasks
from cowp_ros.skills.skill_map import SkillMap, load_skill_map
from cowp_ros.tasks import all_tasks

ROOT = Path(__file__).resolve().parents[2]
ROBOT_YAML = ROOT / "config" / "robot.yaml"
SKILLS_YAML = ROOT / "config" / "skills.yaml"


@pytest.fixture(scope="session")
def robot() -> RobotConfig:
    return load_robot_config(ROBOT_YAML)


@pytest.fixture(scope="session")
def fast_robot(robot: RobotConfig) -> RobotConfig:
    """config/robot.yaml with arm moves fast enough for tests (topics unchanged)."""
    arm = dataclasses.replace(robot.arm, max_joint_velocity_rad_s=8.0, min_move_duration_s=0.2)
    return dataclasses.replace(robot, arm=arm)


@pytest.fixture(scope="session")
def skill_map(robot: RobotConfig) -> SkillMap:
    # as the executor builds it: with the registered tasks' parameter names
    return with_tasks(
        load_skill_map(SKILLS_YAML, arm_poses=set(robot.arm.poses)), all_tasks().values()
    )


@pytest.fixture(scope="module")
def harness() -> Iterator:
    from ros_fakes import RosHarness

    ros = RosHarness()
    yield ros
    ros.shutdown()
