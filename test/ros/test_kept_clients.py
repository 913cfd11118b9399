"""The task manager makes its service clients once, when it starts, and each run asks
through them: no run makes a client just before its first call (which races discovery,
see cowp_ros/ros/clients/kept_clients.py). In process, on one executor."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rcl_interfaces.srv import GetParameters
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.ros.clients.commonsense_client import CommonsenseClient
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.clients.planner_client import PlannerClient
from cowp_ros.ros.names import ACQUIRE_SERVICE, CHECK_PLAN_SERVICE, PLAN_SERVICE
from cowp_ros.ros.nodes.task_manager import TaskManager
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

pytestmark = pytest.mark.ros


@pytest.fixture
def context() -> Iterator[Any]:
    made = rclpy.Context()
    rclpy.init(context=made)
    yield made
    rclpy.shutdown(context=made)


def service_names(node: Node) -> list[str]:
    return sorted(client.srv_name for client in node.clients)


def test_one_client_per_service_made_once_and_destroyed_by_close(context: Any) -> None:
    node = Node("kept_clients_user", context=context)
    try:
        kept = KeptClients(node)
        plan = kept.get(Plan, PLAN_SERVICE)
        assert kept.get(Plan, PLAN_SERVICE) is plan
        assert kept.get(GetParameters, "/a/get_parameters") is not kept.get(
            GetParameters, "/b/get_parameters"
        )
        assert len(kept) == 3 and len(list(node.clients)) == 3
        kept.close()
        assert list(node.clients) == [] and len(kept) == 0
    finally:
        node.destroy_node()


def test_the_task_manager_makes_its_run_clients_when_it_starts() -> None:
    rclpy.init()
    try:
        manager = TaskManager()
        try:
            made = service_names(manager)
            for name in (PLAN_SERVICE, CHECK_PLAN_SERVICE, ACQUIRE_SERVICE):
                assert name in made, made
            # A run's clients are the node's: making and closing them changes nothing.
            planner = PlannerClient(manager, clients=manager.service_clients)
            commonsense = CommonsenseClient(
                manager,
                task_name="serve_water",
                description="serving water",
                phrases=ActionPhrases({}),
                clients=manager.service_clients,
            )
            assert planner.client is manager.service_clients.get(Plan, PLAN_SERVICE)
            assert commonsense.check_client is manager.service_clients.get(
                CheckPlan, CHECK_PLAN_SERVICE
            )
            assert commonsense.acquire_client is manager.service_clients.get(
                AcquireKnowledge, ACQUIRE_SERVICE
            )
            planner.close()
            commonsense.close()
            assert service_names(manager) == made
        finally:
            manager.destroy_node()
    finally:
        rclpy.try_shutdown()


def test_runs_after_the_first_ask_through_the_same_client(context: Any) -> None:
    """Two runs' planner clients, each closed after its run, plan through one client."""
    server = Node("kept_planner", context=context)
    user = Node("kept_planner_user", context=context)
    calls: list[str] = []

    def on_plan(request: Any, response: Any) -> Any:
        calls.append(request.problem_pddl)
        response.success, response.status, response.planner = True, "found", "test planner"
        return response

    server.create_service(Plan, PLAN_SERVICE, on_plan)
    executor = MultiThreadedExecutor(context=context)
    executor.add_node(server)
    executor.add_node(user)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    kept = KeptClients(user)
    try:
        first = kept.get(Plan, PLAN_SERVICE)
        for _run in range(2):
            planner = PlannerClient(user, clients=kept, timeout_margin_s=5.0)
            assert planner.client is first
            assert planner.solve(get_task("fill_cup").load(), 10.0).found
            planner.close()
        assert len(calls) == 2
        assert service_names(user) == [PLAN_SERVICE]
    finally:
        executor.shutdown()
        server.destroy_node()
        user.destroy_node()
        spinning.join(timeout=5.0)
