"""planner: the `Plan` service over the core's planners (pyperplan or Fast Downward).

A request names a registered task (closed-world plan of its PDDL files) or carries
PDDL text, which is how the task manager asks for plans of its augmented domain and
current state. Bad PDDL, an unknown task or a planner that cannot run end in a
response that says so (`status: error`), never in a dead service. Any ROS peer can
call it, so every request is bounded: its PDDL's size, its grounding size (counted
before a planner starts), the planner process's memory (`memory_mb`) and its deadline,
up to `max_timeout_s`, which is kept at the task manager's own planning deadline.
Requests are served side by side, up to `max_concurrent`: a peer that holds one slot
with a slow request does not make the task manager's request wait behind it, and a
request past the limit is refused at once ("busy") rather than queued; the task manager's
client tries again until its own deadline (`PlannerClient`).
"""

from __future__ import annotations

import threading
from functools import partial

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from cowp_interfaces.srv import Plan
from cowp_ros.errors import CowpError
from cowp_ros.limits import MAX_GROUND_ACTIONS, PLANNER_MEMORY_MB
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PLANNER_NAMES, Planner, make_planner
from cowp_ros.planning.planner import request_deadline
from cowp_ros.ros.conversions import PLANNER_BUSY, put_plan_result
from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.names import PLAN_SERVICE
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, at_least, declare_parameters, positive
from cowp_ros.tasks import get_task

THREADS = 8
"""The executor's threads: one more than the most requests planned at once, so that a
request past the limit finds a free thread to be refused on (rclpy's default is one per
core: two here, both busy planning)."""

PARAMETERS = (
    Param(
        "planner",
        "auto",
        f"planner backend: {', '.join(PLANNER_NAMES)} (auto: Fast Downward's eager search "
        "where installed, else pyperplan; fast_downward: LAMA-first)",
    ),
    Param("timeout_s", 60.0, "default planning deadline (a request may set its own)", positive),
    Param(
        "max_timeout_s",
        60.0,
        "the longest deadline a request may ask for (longer ones are cut); at most the "
        "task manager's planner_timeout_s, so its wait never runs out first",
        positive,
    ),
    Param(
        "max_concurrent",
        2,
        f"requests planned at once (at most {THREADS - 1}); one more is refused at once as busy",
        at_least(1),
    ),
    Param(
        "memory_mb",
        PLANNER_MEMORY_MB,
        "address space of one planner process (RLIMIT_AS); past it the request ends in "
        "an error that says so",
        at_least(64),
    ),
    Param(
        "max_ground_actions",
        MAX_GROUND_ACTIONS,
        "reachable ground actions a request's task may have (counted before planning, "
        "relaxed); more is refused",
        at_least(1),
    ),
)


class PlannerNode(Node):
    def __init__(self) -> None:
        super().__init__("planner")
        params = declare_parameters(self, PARAMETERS)
        self.planner: Planner = make_planner(
            params["planner"],
            memory_mb=params["memory_mb"],
            max_ground_actions=params["max_ground_actions"],
        )
        self.default_timeout_s = params["timeout_s"]
        self.max_timeout_s = params["max_timeout_s"]
        self.max_concurrent = params["max_concurrent"]
        if self.max_concurrent >= THREADS:
            raise CowpError(
                f"max_concurrent must be at most {THREADS - 1}, not {self.max_concurrent}"
            )
        self._slots = threading.BoundedSemaphore(self.max_concurrent)
        self.create_service(
            Plan, PLAN_SERVICE, self.on_plan, callback_group=ReentrantCallbackGroup()
        )
        self.get_logger().info(f"planning with {self.planner.name} on {PLAN_SERVICE}")

    def on_plan(self, request: Plan.Request, response: Plan.Response) -> Plan.Response:
        response.planner = self.planner.name
        if not self._slots.acquire(blocking=False):
            response.success, response.status = False, "error"
            response.message = (
                f"{PLANNER_BUSY}: {self.max_concurrent} requests are being planned "
                "(try again when one ends)"
            )
            self.get_logger().warning("refused a plan request: busy")
            return response
        try:
            return self._plan(request, response)
        finally:
            self._slots.release()

    def _plan(self, request: Plan.Request, response: Plan.Response) -> Plan.Response:
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
    run_node(
        "planner", PlannerNode, partial(SteadyMultiThreadedExecutor, num_threads=THREADS), args=args
    )


if __name__ == "__main__":
    main()
