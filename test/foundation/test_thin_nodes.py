"""The task manager's node file only wires the node (parameters, subscription, action
server); what a run is lives in the run session and the ROS layer's own files."""

from __future__ import annotations

from pathlib import Path

import cowp_ros

PACKAGE = Path(cowp_ros.__file__).resolve().parent
MAX_NODE_LINES = 250


def test_the_task_manager_node_file_is_thin() -> None:
    path = PACKAGE / "ros" / "nodes" / "task_manager.py"
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_NODE_LINES, f"{path.name} has {lines} lines (the run belongs elsewhere)"
