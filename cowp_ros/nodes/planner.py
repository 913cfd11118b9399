"""planner: the `Plan` service over the core's planners (pyperplan or Fast Downward).

A request names a registered task (closed-world plan of its PDDL files) or carries
PDDL text, which is how the task manager asks for plans of its augmented domain and
current state. Bad PDDL, an unknown task or a planner that cannot run end in a
response that says so (`status: error`), never in a dead service. A request may choose
its own deadline, up to `max_timeout_s`: one client must not hold the planner (and a
CPU core) for as long as it likes.
"""

from __future__ import annotations

import math
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from cowp_interfaces.srv import Plan
from cowp_ros.errors import CowpError
from cowp_ros.nodes.conversions import steps_to_msgs
from cowp_ros.nodes.node_main import run_node
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PLANNER_NAMES, Planner, make_planner
from cowp_ros.planning.planner import request_deadline
from cowp_ros.tasks import get_task


class PlannerNode(Node):
    def __init__(self) -> None:
        super().__init__("planner")
        self.declare_parameter(
            "planner",
            "pyperplan",
            ParameterDescriptor(description=f"planner backend: {', '.join(PLANNER_NAMES)}"),
        )
        self.declare_parameter(
            "timeout_s",
            60.0,
            ParameterDescriptor(
                description="default planning deadline (a request may set its own)",
                dynamic_typing=True,  # 5 and 5.0 both mean five seconds
            ),
        )
        self.declare_parameter(
            "max_timeout_s",
            300.0,
            ParameterDescriptor(
                description="the longest deadline a request may ask for (longer ones are cut)",
                dynamic_typing=True,
            ),
        )
        self.planner: Planner = make_planner(self.get_parameter("planner").value)
        self.default_timeout_s = seconds_parameter("timeout_s", self.get_parameter("timeout_s"))
        self.max_timeout_s = seconds_parameter("max_timeout_s", self.get_parameter("max_timeout_s"))
        self.create_service(Plan, "/cowp/plan", self.on_plan)
        self.get_logger().info(f"planning with {self.planner.name} on /cowp/plan")

    def on_plan(self, request: Plan.Request, response: Plan.Response) -> Plan.Response:
        response.planner = self.planner.name
        try:
            task = self._task_of(request)
            timeout = request_deadline(
                request.timeout_s, self.default_timeout_s, self.max_timeout_s
            )
            result = self.planner.solve(task, timeout)
        except CowpError as err:
            response.success, response.status, response.message = False, "error", str(err)
            self.get_logger().warning(f"plan request failed: {err}")
            return response
        response.success = result.found
        response.status = result.status.value
        response.steps = steps_to_msgs(result.steps)
        response.planning_time_s = float(result.seconds)
        response.message = result.detail
        return response

    @staticmethod
    def _task_of(request: Plan.Request) -> PlanningTask:
        if request.domain_pddl or request.problem_pddl:
            if not (request.domain_pddl and request.problem_pddl):
                raise CowpError("a Plan request with PDDL needs both domain_pddl and problem_pddl")
            return PlanningTask.from_text(request.domain_pddl, request.problem_pddl, "request")
        return get_task(request.task).load()


def seconds_parameter(name: str, parameter: Any) -> float:
    """A parameter that holds seconds: a positive, finite number (int or float)."""
    value = parameter.value
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise CowpError(
            f"parameter {name} must be a positive number of seconds, not {value!r}",
            hint=f"e.g. --set planner.{name}=60",
        )
    return float(value)


def main(args: list[str] | None = None) -> None:
    run_node("planner", PlannerNode, args=args)


if __name__ == "__main__":
    main()
