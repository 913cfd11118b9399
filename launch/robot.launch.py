"""ros2 launch cowp_ros robot.launch.py: cowp_ros on the real robot.

Starts the 'robot' profile of config/bringup.yaml (planner, commonsense, executor with
the Nav2 / UR / Hand-E backends, task_manager, situation_detector). The drivers must
already be running: see docs/robot.md, "Running on the robot". Before any node starts
the profile is checked (`cowp doctor --profile robot`): a missing piece is named with
the command that installs it.
"""

from launch.actions import OpaqueFunction

from cowp_ros.bringup.doctor import refuse_if_missing
from cowp_ros.bringup.launch_translation import launch_description


def generate_launch_description():
    return launch_description(
        "robot",
        extra_actions=[OpaqueFunction(function=refuse_if_missing, kwargs={"with_launch": False})],
    )
