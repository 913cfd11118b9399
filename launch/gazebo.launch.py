"""ros2 launch cowp_ros gazebo.launch.py: the kitchen in Gazebo Harmonic plus our nodes.

Starts Gazebo (ros_gz_sim) with config/gazebo/kitchen.sdf, the ros_gz_bridge
parameter_bridge with config/gazebo/bridge.yaml, and the 'gazebo' profile of
config/bringup.yaml (use_sim_time on every node). The UR5e with its controllers and
Nav2 are started beside it, as docs/robot.md "Running in Gazebo" describes.

Needs: ros-kilted-ros-gz (ros_gz_sim, ros_gz_bridge).
"""

from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from cowp_ros.bringup.launch_translation import launch_description
from cowp_ros.resources import share_path


def generate_launch_description():
    world = str(share_path("config", "gazebo", "kitchen.sdf"))
    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource([FindPackageShare("ros_gz_sim"), "/launch/gz_sim.launch.py"]),
        launch_arguments={"gz_args": f"-r {world}"}.items(),
    )
    bridge = Node(
        package="ros_gz_bridge",
        executable="parameter_bridge",
        name="ros_gz_bridge",
        parameters=[{"config_file": str(share_path("config", "gazebo", "bridge.yaml"))}],
        output="screen",
    )
    return launch_description("gazebo", extra_actions=[gazebo, bridge])
