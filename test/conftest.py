"""Test-wide ROS 2 environment: DDS stays on loopback, each run gets its own domain.

Set before anything imports rclpy, and inherited by every node process a test starts,
so parallel test runs (or a developer's running stack) never see each other.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# An explicit COWP_TEST_ROS_DOMAIN_ID pins the domain (to watch a run with ros2 topic echo).
os.environ["ROS_DOMAIN_ID"] = os.environ.get(
    "COWP_TEST_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100))
)

# The embedded model's shared servers of a test run live in a folder of the run's own
# (not the user's, whose server a developer may be using), and are stopped at its end.
_RUNTIME = tempfile.mkdtemp(prefix="cowp-test-llm-run-")
os.environ["COWP_LLM_RUNTIME_DIR"] = _RUNTIME


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    from cowp_ros.llm.shared_server import stop_servers

    stop_servers(Path(_RUNTIME), grace_s=5.0)
    shutil.rmtree(_RUNTIME, ignore_errors=True)
