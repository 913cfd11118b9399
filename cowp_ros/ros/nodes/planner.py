"""planner: the `Plan` service over the core's planners (pyperplan or Fast Downward).

A request names a registered task (closed-world plan of its PDDL files) or carries
PDDL text, which is how the task manager asks for plans of its augmented domain and
current state. Bad PDDL, an unknown task or a planner that cannot run end in a
response that says so (`status: error`), never in a dead service.
"""

from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from cowp_interfaces.srv import Plan
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PLANNER_NAMES, Planner, make_planner
from cowp_ros.ros.conversions import steps_to_msgs
from cowp_ros.ros.node_main import run_node
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
                description="default planning deadline (a request may set its own)"
            ),
        )
        self.planner: Planner = make_planner(self.get_parameter("planner").value)
        self.default_timeout_s = float(self.get_parameter("timeout_s").value)
        if self.default_timeout_s <= 0:
            raise CowpError(f"parameter timeout_s must be > 0, not {self.default_timeout_s}")
        self.create_service(Plan, "/cowp/plan", self.on_plan)
        self.get_logger().info(f"planning with {self.planner.name} on /cowp/plan")

    def on_plan(self, request: Plan.Request, response: Plan.Response) -> Plan.Response:
        response.planner = self.planner.name
        try:
            task = self._task_of(request)
            timeout = request.timeout_s if request.timeout_s > 0 else self.default_timeout_s
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


def main(args: list[str] | None = None) -> None:
    run_node("planner", PlannerNode, args=args)


if __name__ == "__main__":
    main()
