"""Test-wide ROS 2 environment: DDS stays on loopback, each run gets its own domain.

Set before anything imports rclpy, and inherited by every node process a test starts,
so parallel test runs (or a developer's running stack) never see each other.
"""

from __future__ import annotations

import os
import random

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# An explicit COWP_TEST_ROS_DOMAIN_ID pins the domain (to watch a run with ros2 topic echo).
os.environ["ROS_DOMAIN_ID"] = os.environ.get(
    "COWP_TEST_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100))
)
