"""ros2 launch cowp_ros ur_hande.launch.py robot_ip:=<ROBOT_IP> [hande_tty:=/dev/ttyUSB0]

The UR5e and the Hand-E with ONE controller manager and ONE robot description:

- ur_robot_driver's ur_control.launch.py (its ros2_control_node, dashboard client,
  controller stopper and controllers, scaled_joint_trajectory_controller active) with
  tf_prefix:=ur_ (the joint names of config/robot.yaml) and, as its
  description_launchfile, ur_hande_description.launch.py: one robot_state_publisher
  with the arm and the hand (config/robot/ur_hande.urdf.xacro), so the driver's
  controller manager loads the Hand-E's hardware interface beside the UR's;
- a spawner for gripper_action_controller (parallel_gripper_action_controller,
  config/robot/hande_controller.yaml) in that controller manager.

Started alone, the Hand-E driver's own launch file would add a second controller
manager and a second /robot_description publisher; do not start it. The UR driver's
controller_stopper keeps a fixed list of controllers running while the External Control
program is stopped (ur_control.launch.py has no argument for it): the gripper controller
is deactivated while the program is stopped and reactivated when it plays
(docs/robot.md).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from cowp_ros.resources import share_path

TF_PREFIX = "ur_"
GRIPPER_CONTROLLER = "gripper_action_controller"


def drivers(context, *args, **kwargs):
    return [
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution(
                    [FindPackageShare("ur_robot_driver"), "launch", "ur_control.launch.py"]
                )
            ),
            launch_arguments={
                "ur_type": "ur5e",
                "robot_ip": LaunchConfiguration("robot_ip"),
                "tf_prefix": TF_PREFIX,
                "description_launchfile": str(
                    share_path("launch", "ur_hande_description.launch.py")
                ),
                "launch_rviz": LaunchConfiguration("launch_rviz"),
            }.items(),
        ),
        Node(
            package="controller_manager",
            executable="spawner",
            name=f"spawn_{GRIPPER_CONTROLLER}",
            arguments=[
                GRIPPER_CONTROLLER,
                "--controller-manager",
                "/controller_manager",
                "--param-file",
                str(share_path("config", "robot", "hande_controller.yaml")),
            ],
            output="screen",
        ),
    ]


def generate_launch_description():
    return LaunchDescription(
        [
            DeclareLaunchArgument("robot_ip", description="the UR's IP address"),
            DeclareLaunchArgument(
                "hande_tty", default_value="/dev/ttyUSB0", description="the Hand-E's RS-485 port"
            ),
            DeclareLaunchArgument(
                "arm_mount_xyz",
                default_value="0.1 0 0.7",
                description="the UR base in base_link, metres (measure it)",
            ),
            DeclareLaunchArgument("launch_rviz", default_value="false"),
            OpaqueFunction(function=drivers),
        ]
    )
