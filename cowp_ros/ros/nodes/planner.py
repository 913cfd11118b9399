"""planner: the `Plan` service over the core's planners (pyperplan or Fast Downward).

A request names a registered task (closed-world plan of its PDDL files) or carries
PDDL text, which is how the task manager asks for plans of its augmented domain and
current state. Bad PDDL, an unknown task or a planner that cannot run end in a
response that says so (`status: error`), never in a dead service. A request may choose
its own deadline, up to `max_timeout_s`: one client must not hold the planner (and a
CPU core) for as long as it likes.
"""

from __future__ import annotations

from rclpy.node import Node

from cowp_interfaces.srv import Plan
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PLANNER_NAMES, Planner, make_planner
from cowp_ros.planning.planner import request_deadline
from cowp_ros.ros.conversions import put_plan_result
from cowp_ros.ros.names import PLAN_SERVICE
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, declare_parameters, positive
from cowp_ros.tasks import get_task

PARAMETERS = (
    Param("planner", "pyperplan", f"planner backend: {', '.join(PLANNER_NAMES)}"),
    Param("timeout_s", 60.0, "default planning deadline (a request may set its own)", positive),
    Param(
        "max_timeout_s",
        300.0,
        "the longest deadline a request may ask for (longer ones are cut)",
        positive,
    ),
)


class PlannerNode(Node):
    def __init__(self) -> None:
        super().__init__("planner")
        params = declare_parameters(self, PARAMETERS)
        self.planner: Planner = make_planner(params["planner"])
        self.default_timeout_s = params["timeout_s"]
        self.max_timeout_s = params["max_timeout_s"]
        self.create_service(Plan, PLAN_SERVICE, self.on_plan)
        self.get_logger().info(f"planning with {self.planner.name} on {PLAN_SERVICE}")

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
        put_plan_result(response, result)
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
