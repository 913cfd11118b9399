"""A scriptable client for the `RunTask` action, in the manner of nav2_simple_commander.

    client = TaskClient()
    client.wait_until_ready()
    client.run_task("serve_water")
    while not client.is_task_complete():
        feedback = client.get_feedback()
    result = client.get_result()          # TaskResult with an Outcome enum
    client.close()

It owns its own rclpy context, so it can live inside a program that also runs other
ROS code (the `cowp demo` command uses it), and it never blocks longer than the call's
timeout: a task manager that disappears mid-task ends as `Outcome.ABORTED` with a
message saying so, instead of a hang. A result request that was lost (the server was
still discovering this client) is sent again once the server's goal status says the
goal ended, so a result is not lost to discovery either; and the task manager also
publishes each goal's outcome on `/cowp/task_outcomes`, which the client reads too, so
a result whose answer was lost when the task manager went away right after sending it
(Ctrl-C mid-task) still arrives (`cowp_ros.ros.result_delivery`).

`wait_until_ready` returns once the task manager has answered this client, not only
once the client has found it (`cowp_ros.ros.handshake`): a server that has not yet found
a new client drops its answers, the goal's acceptance included.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.task import Future

from cowp_interfaces.action import RunTask
from cowp_interfaces.msg import TaskOutcome
from cowp_ros.cowp.driver import Outcome
from cowp_ros.errors import CowpError
from cowp_ros.ros import handshake
from cowp_ros.ros.goal_limits import goal_problem
from cowp_ros.ros.names import RUN_TASK_ACTION, TASK_OUTCOMES_TOPIC
from cowp_ros.ros.own_node import OwnNode
from cowp_ros.ros.result_delivery import OUTCOMES_QOS, result_of
from cowp_ros.ros.waiting import Cancellable, WaitEnd

ENDED = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED)

RESULT_REASK_S = 2.0
"""How long after the task manager says that the goal ended the client waits for its
result before asking again. The request sent when the goal was accepted can be lost
while the server is still discovering this client (a new client's request or answer,
see cowp_ros/ros/clients/kept_clients.py); asking again costs one small request, and
the server answers every request for a goal it still holds."""

KEPT_OUTCOMES = 16
"""Outcomes read from the outcomes topic that are kept (the latest goals'): the one of
this client's goal can arrive before the goal's acceptance is read."""


@dataclass(frozen=True)
class _Answer:
    """The server's answer for the goal: its final status and result (None: none sent)."""

    status: int
    result: RunTask.Result | None


@dataclass(frozen=True)
class TaskResult:
    outcome: Outcome
    success: bool
    executed_steps: list[str]
    handled_situations: list[str]
    explanation: str
    report_path: str = ""
    feedback: list[RunTask.Feedback] = field(default_factory=list)
    delivered: bool = True
    """False when the task manager sent no result (gone, or past the wait): the client
    made this one up, with why."""


def step_text(step) -> str:
    """`fill_water(cup_1, faucet_1)` from a PlanStep message."""
    return f"{step.action}({', '.join(step.arguments)})"


class TaskClient:
    def __init__(self, action_name: str = RUN_TASK_ACTION, node_name: str = "cowp_task_client"):
        self._own = OwnNode(node_name)
        self.node = self._own.node
        self.executor = self._own.executor
        self.action_name = action_name
        self.client: ActionClient[Any, Any, Any] = ActionClient(self.node, RunTask, action_name)
        self._goal_handle: ClientGoalHandle[Any, Any, Any] | None = None
        self._result_futures: list[Future[Any]] = []  # the first, then any asked again
        self._asked_at = 0.0
        self._ended_seen_at: float | None = None  # when the status first said "ended"
        self._feedback: list[RunTask.Feedback] = []
        self._read = 0  # feedback messages already handed out by get_feedback()
        self._outcomes: OrderedDict[bytes, TaskOutcome] = OrderedDict()
        self.node.create_subscription(
            TaskOutcome, TASK_OUTCOMES_TOPIC, self._on_outcome, OUTCOMES_QOS
        )

    # ------------------------------------------------------------------ lifecycle
    def wait_until_ready(self, timeout_s: float = 60.0, cancel: Cancellable | None = None) -> bool:
        """Wait until the task manager's action server is there and has answered this
        client (see the module's docstring): True once it has, False if `cancel` was set
        first (a Ctrl-C handler that cancels rather than raises must still end this
        wait); raises CowpError when it does not answer in time."""
        cancel = cancel or threading.Event()
        found = handshake.reach_server(
            self.client, RunTask, handshake.spinning_wait(self._own, cancel), cancel, timeout_s
        )
        if found is WaitEnd.CANCELED:
            return False
        if found is WaitEnd.GONE:
            raise CowpError(
                f"the RunTask action server at {self.action_name} went away before it answered",
                hint="the task manager's node died? its log says why",
            )
        if found is not WaitEnd.DONE:
            if self.client.server_is_ready():
                raise CowpError(
                    f"the RunTask action server at {self.action_name} is there but did not "
                    f"answer within {timeout_s:.0f} s",
                    hint="the task manager is up but not serving requests: its log says why",
                )
            raise CowpError(
                f"no RunTask action server at {self.action_name} after {timeout_s:.0f} s",
                hint="start the stack first (`cowp bringup --profile sim`) and check "
                "ROS_DOMAIN_ID matches",
            )
        return True

    def close(self) -> None:
        self._own.close()

    # ---------------------------------------------------------------------- tasks
    def run_task(self, task: str, timeout_s: float = 30.0) -> None:
        """Send the goal; raises CowpError if the task manager rejects it."""
        problem = goal_problem(RunTask.Goal(task=task))
        if problem is not None:
            raise CowpError(f"not sent: {problem}")
        self._feedback = []
        self._read = 0
        future = self.client.send_goal_async(
            RunTask.Goal(task=task), feedback_callback=self._on_feedback
        )
        self._spin_until(future, timeout_s, "the task manager did not answer the goal")
        handle = future.result()
        if handle is None or not handle.accepted:
            raise CowpError(
                f"the task manager rejected task '{task}'",
                hint="a task is already running, or the goal was refused: the task "
                "manager's log says which",
            )
        self._goal_handle = handle
        self._result_futures = [handle.get_result_async()]
        self._asked_at, self._ended_seen_at = time.monotonic(), None

    def is_task_complete(self, spin_s: float = 0.1) -> bool:
        if not self._result_futures:
            return True
        self.executor.spin_once(timeout_sec=spin_s)
        return self._answered() is not None

    def _answered(self) -> _Answer | None:
        """The answer to the first answered result request, or the goal's outcome read
        from the outcomes topic; asks again when the goal has ended `RESULT_REASK_S` ago
        without an answer (see RESULT_REASK_S)."""
        for future in self._result_futures:
            if future.done():
                response = future.result()
                if response is None:
                    return _Answer(GoalStatus.STATUS_UNKNOWN, None)
                return _Answer(response.status, response.result)
        handle = self._goal_handle
        if handle is not None:
            outcome = self._outcomes.get(bytes(handle.goal_id.uuid))
            if outcome is not None:
                return _Answer(outcome.status, result_of(outcome))
        if handle is None or handle.status not in ENDED:
            return None
        now = time.monotonic()
        if self._ended_seen_at is None:
            self._ended_seen_at = now
        if now - max(self._ended_seen_at, self._asked_at) > RESULT_REASK_S:
            self._result_futures.append(handle.get_result_async())
            self._asked_at = now
        return None

    def get_feedback(self) -> list[RunTask.Feedback]:
        """Feedback received since the last call (the narrative, in order)."""
        new = self._feedback[self._read :]
        self._read = len(self._feedback)
        return new

    @property
    def all_feedback(self) -> list[RunTask.Feedback]:
        """Every feedback message of the current task so far."""
        return list(self._feedback)

    def cancel_task(self, timeout_s: float = 10.0) -> None:
        if self._goal_handle is None:
            return
        future = self._goal_handle.cancel_goal_async()
        self._spin_until(future, timeout_s, "the task manager did not answer the cancel request")

    def get_result(self, timeout_s: float = 600.0, server_gone_after_s: float = 10.0) -> TaskResult:
        """Wait for the result; a vanished task manager ends as ABORTED, not as a hang."""
        if not self._result_futures:
            raise CowpError("no task was started")
        deadline = time.monotonic() + timeout_s
        gone_since: float | None = None
        while (answered := self._answered()) is None:
            self.executor.spin_once(timeout_sec=0.1)
            if time.monotonic() > deadline:
                return self._aborted(f"no result within {timeout_s:.0f} s")
            if self.client.server_is_ready():
                gone_since = None
            else:
                gone_since = gone_since or time.monotonic()
                if time.monotonic() - gone_since > server_gone_after_s:
                    return self._aborted("the task manager went away mid-task")
        result = answered.result
        if result is None:
            return self._aborted("the task manager sent no result")
        outcome = Outcome.parse(result.outcome)
        if answered.status == GoalStatus.STATUS_CANCELED:
            outcome = Outcome.CANCELED
        return TaskResult(
            outcome=outcome,
            success=bool(result.success),
            executed_steps=[step_text(s) for s in result.executed_steps],
            handled_situations=list(result.handled_situations),
            explanation=result.explanation,
            report_path=result.report_path,
            feedback=list(self._feedback),
        )

    # -------------------------------------------------------------------- helpers
    def _on_feedback(self, message) -> None:
        self._feedback.append(message.feedback)

    def _on_outcome(self, message: TaskOutcome) -> None:
        self._outcomes[bytes(message.goal_id)] = message
        while len(self._outcomes) > KEPT_OUTCOMES:
            self._outcomes.popitem(last=False)

    def _spin_until(self, future, timeout_s: float, what: str) -> None:
        if not self._own.spin_until(future.done, timeout_s, step_s=0.1):
            raise CowpError(f"{what} within {timeout_s:.0f} s")

    def _aborted(self, why: str) -> TaskResult:
        return TaskResult(
            Outcome.ABORTED, False, [], [], why, feedback=list(self._feedback), delivered=False
        )
