"""ros2 launch cowp_ros gazebo.launch.py [profile:=gazebo_nav2] [gui:=false]

The kitchen in Gazebo Ionic with the whole robot, and our nodes:

- one Gazebo server (ros_gz_sim's gz_sim.launch.py) with config/gazebo/kitchen.sdf;
- one robot description, config/gazebo/cowp_robot.urdf.xacro (base with lidar, the
  UR5e from ur_description, a Hand-E, a wrist camera), published by
  robot_state_publisher and spawned into Gazebo from /robot_description;
- its controllers in gz_ros2_control (config/gazebo/controllers.yaml): joint states,
  scaled_joint_trajectory_controller (a joint_trajectory_controller) and
  gripper_action_controller (parallel_gripper_action_controller);
- ros_gz_bridge with config/gazebo/bridge.yaml: clock, TwistStamped /cmd_vel, odometry,
  DiffDrive's TF, wheel joint states, lidar, wrist camera;
- a map -> odom transform (the robot starts at the map origin, the charging dock);
- the profile's nodes (config/bringup.yaml) with use_sim_time: profile gazebo drives
  the base with base_controller (no map); profile gazebo_nav2 starts Nav2's navigation
  (nav2_bringup navigation_launch.py, `nav2_params:=FILE` for your own parameters) and a
  map_server with config/gazebo/kitchen_map.yaml instead.

Before anything starts, the profile is checked (`cowp doctor --profile gazebo`): a
missing package is named with the command that installs it.
"""

from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from cowp_ros.bringup.doctor import refuse_if_missing
from cowp_ros.bringup.launch_translation import launch_description
from cowp_ros.bringup.spec import load_profile
from cowp_ros.resources import share_path

ROBOT_NAME = "cowp_robot"
CONTROLLERS = (
    "joint_state_broadcaster",
    "scaled_joint_trajectory_controller",
    "gripper_action_controller",
)
SIM_TIME = {"use_sim_time": True}
# gui:=false: the server alone (-s), and its sensors rendered without a display
# (--headless-rendering, EGL): without it a headless machine has no camera image and
# no gpu_lidar scan.
HEADLESS_ARGS = "-s --headless-rendering"


def gazebo(context, *args, **kwargs):
    """Gazebo, the robot, its controllers and the bridge (and Nav2 for gazebo_nav2)."""
    profile = load_profile(LaunchConfiguration("profile").perform(context))
    world = share_path("config", "gazebo", "kitchen.sdf")
    controllers = share_path("config", "gazebo", "controllers.yaml")
    headless = LaunchConfiguration("gui").perform(context).lower() in ("false", "0", "no")
    description = ParameterValue(
        Command(
            [
                FindExecutable(name="xacro"),
                " ",
                str(share_path("config", "gazebo", "cowp_robot.urdf.xacro")),
                " controllers:=",
                str(controllers),
            ]
        ),
        value_type=str,
    )
    actions = [
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution([FindPackageShare("ros_gz_sim"), "launch", "gz_sim.launch.py"])
            ),
            launch_arguments={
                "gz_args": f"-r {HEADLESS_ARGS + ' ' if headless else ''}{world}",
                "on_exit_shutdown": "true",
            }.items(),
        ),
        Node(
            package="robot_state_publisher",
            executable="robot_state_publisher",
            name="robot_state_publisher",
            parameters=[{"robot_description": description, **SIM_TIME}],
            output="screen",
        ),
        Node(
            package="ros_gz_sim",
            executable="create",
            name="spawn_robot",
            arguments=["-topic", "robot_description", "-name", ROBOT_NAME, "-z", "0.0"],
            output="screen",
        ),
        Node(
            package="ros_gz_bridge",
            executable="parameter_bridge",
            name="ros_gz_bridge",
            parameters=[
                {"config_file": str(share_path("config", "gazebo", "bridge.yaml")), **SIM_TIME}
            ],
            output="screen",
        ),
        # The robot starts at the map origin: map and odom coincide (no AMCL here).
        Node(
            package="tf2_ros",
            executable="static_transform_publisher",
            name="map_to_odom",
            arguments=["--frame-id", "map", "--child-frame-id", "odom"],
            parameters=[SIM_TIME],
        ),
        *(
            Node(
                package="controller_manager",
                executable="spawner",
                name=f"spawn_{controller}",
                arguments=[
                    controller,
                    "--controller-manager",
                    "/controller_manager",
                    "--param-file",
                    str(controllers),
                ],
                parameters=[SIM_TIME],
                output="screen",
            )
            for controller in CONTROLLERS
        ),
    ]
    if any(spec.name == "nav2" for spec in profile.nodes):
        actions += nav2(context)
    return actions


def nav2(context):
    """Nav2's navigation servers on the kitchen map (map_server, no AMCL: see above)."""
    arguments = {"use_sim_time": "true", "autostart": "true"}
    params = LaunchConfiguration("nav2_params").perform(context)
    if params:
        arguments["params_file"] = params
    return [
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution(
                    [FindPackageShare("nav2_bringup"), "launch", "navigation_launch.py"]
                )
            ),
            launch_arguments=arguments.items(),
        ),
        Node(
            package="nav2_map_server",
            executable="map_server",
            name="map_server",
            parameters=[
                {
                    "yaml_filename": str(share_path("config", "gazebo", "kitchen_map.yaml")),
                    **SIM_TIME,
                }
            ],
            output="screen",
        ),
        Node(
            package="nav2_lifecycle_manager",
            executable="lifecycle_manager",
            name="lifecycle_manager_map",
            parameters=[{"autostart": True, "node_names": ["map_server"], **SIM_TIME}],
            output="screen",
        ),
    ]


def generate_launch_description():
    return launch_description(
        "gazebo",
        extra_actions=[
            DeclareLaunchArgument(
                "gui",
                default_value="true",
                description="false: server only, headless rendering (-s --headless-rendering)",
            ),
            DeclareLaunchArgument(
                "nav2_params",
                default_value="",
                description="gazebo_nav2: Nav2 parameter file ('' = nav2_bringup's)",
            ),
            OpaqueFunction(function=refuse_if_missing, kwargs={"with_launch": True}),
            OpaqueFunction(function=gazebo),
        ],
    )
