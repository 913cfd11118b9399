#!/usr/bin/env bash
# Source ROS and the workspace, then run the command (default: cowp bringup --profile sim).
set -e
source "/opt/ros/${ROS_DISTRO}/setup.bash"
source /ws/install/setup.bash
exec "$@"
