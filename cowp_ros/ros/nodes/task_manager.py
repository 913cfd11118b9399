"""task_manager: the `RunTask` action server that runs COWP across the graph.

For each goal it runs the core's `OpenWorldPlanner` on COWP's driver through the same
run session as `cowp run` (`cowp_ros.cowp.session`); only the ports differ: the planner
and the reasoning are the `planner` and `commonsense` nodes' services, and the robot is
the executor's `ExecuteSkill` action (`cowp_ros.ros.task_run`, `cowp_ros.ros.graph_robot`).
Situations arrive on `/cowp/situations` from whatever saw them (the camera detector,
the simulation, a bag, a person with `ros2 topic pub`); they wait in a bounded,
deduplicated inbox and reach the loop before the next step, which is when COWP's Plan
Monitor checks the remaining plan.

The feedback is the narrative a person reads: phase, current plan, step index, event.
A cancel is honoured at once, also while the commonsense node is thinking or a skill
is running: every wait of the run watches the run's cancel token. Every failure ends
the goal with an outcome and an explanation that says what failed (a node that died, a
step the robot could not do, no solution); nothing hangs. A JSON report of every
question, PDDL change and plan is written for each run, whatever its outcome; a
shutdown (Ctrl-C) ends the run in flight and waits until its result has gone out to
the client, and its outcome on `/cowp/task_outcomes` was acknowledged by every reader,
before the node goes (`cowp_ros.ros.result_delivery`).

This file only wires the node: its parameters, its subscription and its action server.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.action import ActionClient, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup

from cowp_interfaces.action import ExecuteSkill, RunTask
from cowp_interfaces.msg import Situation as SituationMsg
from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.cowp.inbox import InboxLimits, SituationInbox
from cowp_ros.limits import MAX_TASK_TEXT
from cowp_ros.ros.clients.commonsense_client import cancel_publisher
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.clients.peer_method import StartupPeerCheck
from cowp_ros.ros.clients.world_client import world_parameters_client
from cowp_ros.ros.conversions import situation_from_msg
from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.goal_limits import goal_problem
from cowp_ros.ros.names import (
    ACQUIRE_SERVICE,
    CHECK_PLAN_SERVICE,
    EXECUTE_SKILL_ACTION,
    PLAN_SERVICE,
    RUN_TASK_ACTION,
    SITUATIONS_TOPIC,
)
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.own_node import ActionNode
from cowp_ros.ros.parameters import Param, at_least, declare_parameters, positive
from cowp_ros.ros.result_delivery import OutcomePublisher, ResultAwareActionServer
from cowp_ros.ros.run_context import RunContext
from cowp_ros.ros.task_run import TaskRun, resolve_task

__all__ = ["PARAMETERS", "TaskManager", "main", "resolve_task"]

PARAMETERS = (
    Param(
        "present_objects",
        [""],
        "objects present besides the task's own ([''] = the whole problem's pool); the "
        "acquirer only considers these",
    ),
    Param(
        "world_node",
        "",
        "the node whose world_objects parameter lists the objects the world has (sim_world "
        "in the sim profile); the task is planned with those only, and a step on any other "
        "is refused ('' = none: the present_objects)",
    ),
    Param(
        "report_dir",
        "",
        "where each run's JSON report is written ('' = $COWP_REPORTS_DIR, else build/reports)",
    ),
    Param(
        "prepare_monitor",
        True,
        "once a plan is made, the commonsense node is asked, without waiting, to find out "
        "what its objects will need (once per role and task for the node's life), so that "
        "a situation then costs only its own questions",
    ),
    Param("planner_timeout_s", 60.0, "one planning call", positive),
    Param("commonsense_timeout_s", 600.0, "one monitor or acquirer request", positive),
    Param("step_timeout_s", 300.0, "one executed step", positive),
    Param(
        "max_step_retries",
        2,
        "a failed step is replanned and tried again this many times in a row; the next "
        "failure in a row aborts the run (the grounded method blames a situation about the "
        "world judged harmless on the second failure in a row)",
        at_least(0),
    ),
    Param(
        "max_waiting_situations",
        10,
        "situations waiting for the loop at once (more are dropped, the report counts them)",
        at_least(1),
    ),
    Param(
        "max_situations_per_task",
        20,
        "distinct situations given to the loop in one run (more are dropped and counted)",
        at_least(1),
    ),
    Param(
        "max_situation_rate_hz",
        2.0,
        "situations accepted per second on average (a flood is dropped and counted)",
        positive,
    ),
    Param(
        "shutdown_grace_s",
        5.0,
        "on shutdown, how long the run in flight has to end and its result to reach the client",
        positive,
    ),
)


class TaskManager(ActionNode):
    def __init__(self) -> None:
        super().__init__("task_manager")
        self.params = declare_parameters(self, PARAMETERS)
        self.inbox = SituationInbox(
            InboxLimits(
                max_waiting=self.params["max_waiting_situations"],
                max_per_run=self.params["max_situations_per_task"],
                max_per_s=self.params["max_situation_rate_hz"],
            )
        )
        group = ReentrantCallbackGroup()
        self.create_subscription(
            SituationMsg, SITUATIONS_TOPIC, self.on_situation, 20, callback_group=group
        )
        self.skill_client: ActionClient[Any, Any, Any] = ActionClient(
            self, ExecuteSkill, EXECUTE_SKILL_ACTION, callback_group=group
        )
        self._busy = threading.Lock()
        self._active: TaskRun | None = None
        self.outcomes = OutcomePublisher(self)
        self.commonsense_cancel = cancel_publisher(self)  # made now: matched when needed
        self.server = ResultAwareActionServer(
            self,
            RunTask,
            RUN_TASK_ACTION,
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            cancel_callback=self.on_cancel,
            callback_group=group,
        )
        # Every service a run calls has its client made now, for the node's life: a
        # client made just before its call races discovery (clients/kept_clients.py).
        self.service_clients = KeptClients(self)
        self.service_clients.get(Plan, PLAN_SERVICE)
        self.service_clients.get(CheckPlan, CHECK_PLAN_SERVICE)
        self.service_clients.get(AcquireKnowledge, ACQUIRE_SERVICE)
        world_parameters_client(self.service_clients, self.params["world_node"])
        self.peer_check = StartupPeerCheck(self, self.service_clients)
        self.run_context = RunContext.of(self)  # all a run gets of this node
        self.get_logger().info(f"ready: RunTask on {RUN_TASK_ACTION}")

    # ---------------------------------------------------------------- callbacks
    def on_situation(self, message: SituationMsg) -> None:
        situation = situation_from_msg(message)
        if not situation.text:
            return
        if self.inbox.put(situation):
            self.get_logger().info(
                f"situation from {situation.source or 'someone'}: {situation.text}"
            )

    def on_goal(self, goal: RunTask.Goal) -> GoalResponse:
        """Accept every goal it can keep, so its result says why it is refused (`execute`);
        one too large to keep is rejected (its sender knows why: `TaskClient` checks it)."""
        if len(goal.task) > MAX_TASK_TEXT:
            self.get_logger().warning(f"rejected a RunTask goal: {goal_problem(goal)}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        run = self._active
        if run is not None and run.goal is goal_handle:
            run.cancel.cancel("canceled by the user")
        return CancelResponse.ACCEPT

    def execute(self, goal_handle: ServerGoalHandle) -> RunTask.Result:
        # a refused goal (one sent while a task runs too) ends at once, saying why
        problem = goal_problem(goal_handle.request)
        if problem is None and not self._busy.acquire(blocking=False):
            problem = "a task is already running (one goal at a time)"
        elif problem is None:
            return self._run(goal_handle)
        self.get_logger().warning(f"aborted a RunTask goal: {problem}")
        goal_handle.abort()
        refused = RunTask.Result(
            success=False, outcome="aborted", explanation=f"aborted: {problem}"
        )
        self.outcomes.publish(goal_handle, refused)
        return refused

    def _run(self, goal_handle: ServerGoalHandle) -> RunTask.Result:
        """Run the goal; `_busy` is held (and released here)."""
        try:
            run = TaskRun(self.run_context, goal_handle)
            self._active = run
            try:
                return run.result()
            finally:
                self._active = None
        finally:
            self._busy.release()

    def on_shutdown(self) -> None:
        """End the run in flight (it reports `aborted: shutting down`) and give it
        `shutdown_grace_s` to end, send its result, and have its outcome acknowledged by
        every reader of `/cowp/task_outcomes`, before the node goes."""
        run = self._active
        if run is None:
            return
        deadline = time.monotonic() + self.params["shutdown_grace_s"]
        run.cancel.cancel("the task manager is shutting down")
        ended = run.finished.wait(self.params["shutdown_grace_s"])
        sent = ended and self.server.wait_result_sent(run.goal_id, deadline - time.monotonic())
        if not (sent and self.outcomes.wait_acked(deadline)):
            self.get_logger().warning(
                "shutting down before the result of the task in flight reached its client"
            )


def main(args: list[str] | None = None) -> None:
    run_node("task_manager", TaskManager, SteadyMultiThreadedExecutor, args=args)


if __name__ == "__main__":
    main()
