"""The launch files' half of the node spec: profile nodes as launch_ros `Node` actions.

`ros2 launch cowp_ros <profile>.launch.py` and `cowp bringup --profile <profile>` start
the same nodes with the same parameter files, overrides and remappings, because both
read `config/bringup.yaml` through `cowp_ros.bringup.spec`. launch and launch_ros are
imported only here, and only when a launch file runs (a full ROS 2 install).
"""

from __future__ import annotations

import os
from typing import Any

from cowp_ros.bringup.liveliness import liveliness_environment
from cowp_ros.bringup.node_secrets import node_keys_moved_out
from cowp_ros.bringup.spec import NodeSpec, load_profile, with_parameter_overrides


def node_action(spec: NodeSpec) -> Any:
    """One launch_ros Node with the spec's parameters (files first, then overrides);
    a key in a URL parameter goes to the node's environment instead (node_secrets.py)."""
    from launch_ros.actions import Node

    spec, environment = node_keys_moved_out(spec)
    environment = {**liveliness_environment(os.environ), **environment}
    parameters: list[Any] = [str(path) for path in spec.parameter_files]
    if spec.parameters:
        parameters.append(dict(spec.parameters))
    return Node(
        package=spec.package,
        executable=spec.executable,
        name=spec.name,
        parameters=parameters,
        remappings=list(spec.remappings),
        output="screen",
        emulate_tty=True,
        additional_env=environment or None,
        prefix=" ".join(spec.prefix()) or None,
    )


def profile_actions(profile_name: str, assignments: list[str] | None = None) -> list[Any]:
    """Node actions for every node of the profile that cowp_ros starts itself.

    External nodes (drivers, Gazebo) are left to their own launch files, exactly as
    `cowp bringup` leaves them to the user.
    """
    profile = with_parameter_overrides(load_profile(profile_name), assignments or [])
    return [node_action(spec) for spec in profile.nodes if not spec.external]


def launch_description(default_profile: str, extra_actions: list[Any] | None = None) -> Any:
    """A LaunchDescription over the spec, with the arguments a user can set.

    `profile:=NAME` picks the profile; `overrides:="sim_world.scenario=NAME ..."` takes
    the same NODE.PARAM=VALUE strings as `cowp bringup --set`. `extra_actions` are added
    as they are (the Gazebo launch file adds the simulator and its bridge).
    """
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.substitutions import LaunchConfiguration

    def expand(context: Any) -> list[Any]:
        profile = LaunchConfiguration("profile").perform(context)
        overrides = LaunchConfiguration("overrides").perform(context)
        return profile_actions(profile, overrides.split())

    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "profile",
                default_value=default_profile,
                description="profile of config/bringup.yaml (sim, robot, gazebo, replay)",
            ),
            DeclareLaunchArgument(
                "overrides",
                default_value="",
                description="space-separated NODE.PARAM=VALUE parameter overrides",
            ),
            *(extra_actions or []),
            OpaqueFunction(function=expand),
        ]
    )
