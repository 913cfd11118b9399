"""What the world has, asked of the node that plays it.

sim_world holds its scenario's objects in a read-only `world_objects` parameter; the task
manager reads it through the node's standard `get_parameters` service before each task
(so does a person: `ros2 param get /sim_world world_objects`), and plans with those
objects only (`cowp_ros.tasks.presence`).
"""

from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters
from rclpy.client import Client

from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.waiting import call_service
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.presence import Presence, present_problem

WORLD_OBJECTS_PARAMETER = "world_objects"


def world_name(world_node: str) -> str:
    """The world node's name as the parameter gives it, without slashes ('' = none)."""
    return world_node.strip().strip("/")


def world_parameters_client(clients: KeptClients, world_node: str) -> Client[Any, Any] | None:
    """The kept client of the world node's `get_parameters`; None when none is set."""
    name = world_name(world_node)
    return clients.get(GetParameters, f"/{name}/get_parameters") if name else None


def world_objects(
    world_node: str, *, timeout_s: float, cancel: CancelToken, clients: KeptClients
) -> list[str] | None:
    """The objects `world_node` says the world has; None when no world node is set.

    Asked through the node's kept client (kept_clients.py), which the task manager
    makes when it starts."""
    client = world_parameters_client(clients, world_node)
    if client is None:
        return None
    name = world_name(world_node)
    response = call_service(
        client,
        GetParameters.Request(names=[WORLD_OBJECTS_PARAMETER]),
        timeout_s=timeout_s,
        what=f"asking {name} which objects the world has",
        cancel=cancel,
    )
    values = list(response.values)
    if not values or values[0].type != ParameterType.PARAMETER_STRING_ARRAY:
        raise CowpError(
            f"{name} does not say which objects the world has (no "
            f"{WORLD_OBJECTS_PARAMETER} parameter)",
            hint="set the task manager's world_node to '' and list present_objects instead",
        )
    return list(values[0].string_array_value)


def present_task(
    spec: TaskSpec,
    *,
    world_node: str,
    configured: list[str],
    timeout_s: float,
    cancel: CancelToken,
    clients: KeptClients,
) -> tuple[PlanningTask, Presence]:
    """The task's problem over the objects present, and what is present (see presence)."""
    world = world_objects(world_node, timeout_s=timeout_s, cancel=cancel, clients=clients)
    return present_problem(
        spec.load(),
        spec.task_objects,
        world=world,
        world_source=world_name(world_node),
        configured=configured,
    )
