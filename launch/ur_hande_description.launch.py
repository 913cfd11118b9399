"""The description launch file for ur_robot_driver's ur_control.launch.py.

    (started by ur_hande.launch.py as ur_control.launch.py's description_launchfile)

ur_control.launch.py includes it with robot_ip and ur_type and expects it to start a
robot_state_publisher that publishes /robot_description: here that description is the
arm AND the hand (config/robot/ur_hande.urdf.xacro), so the UR driver's controller
manager, the only one on the robot, gets both ros2_control blocks, and there is one
/robot_description publisher, not one per driver.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from cowp_ros.resources import share_path

ARGUMENTS = {
    "robot_ip": ("0.0.0.0", "the UR's IP address (ur_control.launch.py passes it)"),
    "ur_type": ("ur5e", "UR type (ur_control.launch.py passes it)"),
    "hande_tty": ("/dev/ttyUSB0", "the Hand-E's RS-485 adapter"),
    "arm_mount_xyz": ("0.1 0 0.7", "the UR base in base_link, metres (measure it)"),
}


def description(context, *args, **kwargs):
    # What ur_rsp.launch.py gives the UR's ros2_control block: the External Control
    # script and the RTDE recipes of the installed driver.
    script = PathJoinSubstitution(
        [FindPackageShare("ur_client_library"), "resources", "external_control.urscript"]
    )
    recipes = {
        name: PathJoinSubstitution(
            [FindPackageShare("ur_robot_driver"), "resources", f"rtde_{name}_recipe.txt"]
        )
        for name in ("input", "output")
    }
    command = [
        FindExecutable(name="xacro"),
        " ",
        str(share_path("config", "robot", "ur_hande.urdf.xacro")),
        " script_filename:=",
        script,
        " input_recipe_filename:=",
        recipes["input"],
        " output_recipe_filename:=",
        recipes["output"],
    ]
    for name in ("robot_ip", "ur_type", "hande_tty"):
        command += [f" {name}:=", LaunchConfiguration(name)]
    command += [' arm_mount_xyz:="', LaunchConfiguration("arm_mount_xyz"), '"']
    return [
        Node(
            package="robot_state_publisher",
            executable="robot_state_publisher",
            name="robot_state_publisher",
            parameters=[{"robot_description": ParameterValue(Command(command), value_type=str)}],
            output="both",
        )
    ]


def generate_launch_description():
    return LaunchDescription(
        [
            *(
                DeclareLaunchArgument(name, default_value=default, description=text)
                for name, (default, text) in ARGUMENTS.items()
            ),
            OpaqueFunction(function=description),
        ]
    )
