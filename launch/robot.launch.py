"""ros2 launch cowp_ros robot.launch.py: cowp_ros on the real robot.

Starts the 'robot' profile of config/bringup.yaml (planner, commonsense, executor with
the Nav2 / UR / Hand-E backends, task_manager, situation_detector). The drivers must
already be running: see docs/robot.md, "Running on the robot".
"""

from cowp_ros.bringup.launch_translation import launch_description


def generate_launch_description():
    return launch_description("robot")
