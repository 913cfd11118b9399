"""ros2 launch cowp_ros cowp.launch.py profile:=sim|replay|robot|gazebo

The nodes of one profile of config/bringup.yaml, with the same parameters and
remappings as `cowp bringup --profile PROFILE`, after the same check of what they need.
"""

from launch.actions import OpaqueFunction

from cowp_ros.bringup.doctor import refuse_if_missing
from cowp_ros.bringup.launch_translation import launch_description


def generate_launch_description():
    return launch_description(
        "sim",
        extra_actions=[OpaqueFunction(function=refuse_if_missing, kwargs={"with_launch": False})],
    )
