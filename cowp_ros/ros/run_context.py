"""What a RunTask goal's run is handed by the task manager, typed: never the node itself.

A run (`task_run.TaskRun`) and the robot it drives (`graph_robot.GraphRobot`) need a few
of the task manager's parts: the situations inbox, the executor's action client, the
service clients kept for the node's life, the outcome publisher, the node to make its
per-run clients on, and the parameters a run reads. They get exactly these, so that
neither reads another attribute of the node or a parameter by string key, and the node
file is only wiring (ros2/examples' style).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.publisher import Publisher

from cowp_ros.cowp.inbox import SituationInbox
from cowp_ros.cowp.report import reports_folder
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.result_delivery import OutcomePublisher


@dataclass(frozen=True)
class RunParameters:
    """The task manager's parameters a run reads (config/task_manager.yaml)."""

    max_step_retries: int
    world_node: str
    planner_timeout_s: float
    commonsense_timeout_s: float
    step_timeout_s: float
    prepare_monitor: bool

    @classmethod
    def read(cls, params: Mapping[str, Any]) -> RunParameters:
        return cls(
            max_step_retries=int(params["max_step_retries"]),
            world_node=str(params["world_node"]),
            planner_timeout_s=float(params["planner_timeout_s"]),
            commonsense_timeout_s=float(params["commonsense_timeout_s"]),
            step_timeout_s=float(params["step_timeout_s"]),
            prepare_monitor=bool(params["prepare_monitor"]),
        )


class RunsTasks(Protocol):
    """What a node that runs tasks offers a run (the task manager)."""

    params: dict[str, Any]
    inbox: SituationInbox
    skill_client: ActionClient[Any, Any, Any]
    service_clients: KeptClients
    outcomes: OutcomePublisher
    commonsense_cancel: Publisher | None


@dataclass(frozen=True)
class RunContext:
    """One run's share of the task manager; see the module docstring."""

    node: Node
    """Where the run's own clients are made (a planner and a commonsense client)."""
    inbox: SituationInbox
    skill_client: ActionClient[Any, Any, Any]
    kept: KeptClients
    outcomes: OutcomePublisher
    commonsense_cancel: Publisher | None
    present: tuple[str, ...]
    """present_objects: the world's objects when no world node says (empty: ask it)."""
    report_dir: Path
    params: RunParameters

    @classmethod
    def of(cls, node: RunsTasks) -> RunContext:
        assert isinstance(node, Node)
        return cls(
            node=node,
            inbox=node.inbox,
            skill_client=node.skill_client,
            kept=node.service_clients,
            outcomes=node.outcomes,
            commonsense_cancel=node.commonsense_cancel,
            present=tuple(o for o in node.params["present_objects"] if o),
            report_dir=reports_folder(node.params["report_dir"]),
            params=RunParameters.read(node.params),
        )
