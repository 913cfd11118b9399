"""task_manager: the `RunTask` action server that runs COWP across the graph.

For each goal it drives the core's `OpenWorldPlanner` (cowp_ros.cowp.loop) with planner and
commonsense collaborators that are the `planner` and `commonsense` nodes' services, and
executes each step through the executor's `ExecuteSkill` action. Situations arrive on
`/cowp/situations` from whatever saw them (the camera detector, the simulation, a bag,
a person with `ros2 topic pub`) and are handed to the loop before the next step, which
is when COWP's Plan Monitor checks the remaining plan.

The feedback is the narrative a person reads: phase, current plan, step index, event.
Every failure ends the goal with an outcome and an explanation that says what failed
(a node that died, a step the robot could not do, no solution); nothing hangs. A JSON
report of every question, PDDL change and plan is written for each run.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.action import ExecuteSkill, RunTask
from cowp_interfaces.msg import PlanStep as PlanStepMsg
from cowp_interfaces.msg import Situation
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner, Phase, Reaction
from cowp_ros.cowp.report import Event
from cowp_ros.errors import CowpError
from cowp_ros.pddl import edits
from cowp_ros.planning import PlanStep
from cowp_ros.ros.clients.remote_reasoning import PhaseClock, RemoteCommonsense, RemotePlanner
from cowp_ros.ros.conversions import step_to_msg, steps_to_msgs
from cowp_ros.ros.node_main import run_node
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases

EXECUTE_SKILL_ACTION = "/cowp/execute_skill"


EVENT_PHASES = {
    "plan": "planning",
    "situation": "monitoring",
    "monitor": "monitoring",
    "predicate": "monitoring",
    "pddl_change": "",  # told in the phase of the change it belongs to
    "acquirer": "acquiring",
    "selection": "acquiring",
    "learned": "acquiring",
}
REACTION_TEXT = {
    Reaction.FEASIBLE: "the plan still works: keeping it",
    Reaction.REPLANNED: "changed the plan",
    Reaction.ACQUIRED: "changed the plan with what was learned",
    Reaction.NO_SOLUTION: "no plan is left",
}


class GoalCanceledError(Exception):
    """The client canceled the goal; unwinds the run to a CANCELED result."""


@dataclass
class RunOutcome:
    outcome: str  # completed | no_solution | aborted | canceled
    explanation: str


class TaskManager(Node):
    def __init__(self) -> None:
        super().__init__("task_manager")
        self.declare_parameter(
            "present_objects",
            [""],
            ParameterDescriptor(
                description="objects present besides the task's own ([''] = the whole "
                "problem's pool); the acquirer only considers these"
            ),
        )
        self.declare_parameter(
            "report_dir",
            "build/reports",
            ParameterDescriptor(description="where each run's JSON report is written"),
        )
        self.declare_parameter(
            "planner_timeout_s", 60.0, ParameterDescriptor(description="one planning call")
        )
        self.declare_parameter(
            "commonsense_timeout_s",
            600.0,
            ParameterDescriptor(description="one monitor or acquirer request (many questions)"),
        )
        self.declare_parameter(
            "step_timeout_s", 300.0, ParameterDescriptor(description="one executed step")
        )
        self.declare_parameter(
            "max_step_retries",
            1,
            ParameterDescriptor(description="replans after failed steps before giving up"),
        )
        self.present = [o for o in self.get_parameter("present_objects").value if o]
        self.report_dir = Path(self.get_parameter("report_dir").value)
        self.planner_timeout_s = float(self.get_parameter("planner_timeout_s").value)
        self.commonsense_timeout_s = float(self.get_parameter("commonsense_timeout_s").value)
        self.step_timeout_s = float(self.get_parameter("step_timeout_s").value)
        self.max_step_retries = int(self.get_parameter("max_step_retries").value)
        for name in ("planner_timeout_s", "commonsense_timeout_s", "step_timeout_s"):
            if float(self.get_parameter(name).value) <= 0:
                raise CowpError(f"parameter {name} must be > 0")

        group = ReentrantCallbackGroup()
        # (text, seconds since the step in progress started): the perceive time.
        self.situations: queue.Queue[tuple[str, float]] = queue.Queue()
        self.step_started_at = time.monotonic()
        self.create_subscription(
            Situation, "/cowp/situations", self.on_situation, 20, callback_group=group
        )
        self.skill_client = ActionClient(
            self, ExecuteSkill, EXECUTE_SKILL_ACTION, callback_group=group
        )
        self._busy = threading.Lock()
        self.server = ActionServer(
            self,
            RunTask,
            "/cowp/run_task",
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            callback_group=group,
        )
        self.get_logger().info("ready: RunTask on /cowp/run_task")

    # ---------------------------------------------------------------- callbacks
    def on_situation(self, message: Situation) -> None:
        text = " ".join(message.text.split())
        if text:
            self.get_logger().info(f"situation from {message.source or 'someone'}: {text}")
            self.situations.put((text, time.monotonic() - self.step_started_at))

    def on_goal(self, goal: RunTask.Goal) -> GoalResponse:
        if self._busy.locked():
            self.get_logger().warning("rejected a RunTask goal: a task is already running")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def execute(self, goal_handle: ServerGoalHandle) -> RunTask.Result:
        with self._busy:
            run = TaskRun(self, goal_handle)
            return run.result()


class TaskRun:
    """One RunTask goal: the loop, the feedback, the executed steps, the report."""

    def __init__(self, node: TaskManager, goal_handle: ServerGoalHandle) -> None:
        self.node = node
        self.goal = goal_handle
        self.log = node.get_logger()
        self.executed: list[PlanStepMsg] = []
        self.handled: list[str] = []
        self.loop: OpenWorldPlanner | None = None
        self.step_index = -1
        self.phase = "planning"
        self.clock = PhaseClock()
        self.remotes: list[RemotePlanner | RemoteCommonsense] = []

    # ------------------------------------------------------------------- outcome
    def result(self) -> RunTask.Result:
        started = time.monotonic()
        try:
            outcome = self._run()
        except GoalCanceledError:
            outcome = RunOutcome("canceled", "canceled by the user")
        except CowpError as err:
            outcome = RunOutcome("aborted", f"aborted: {err.message}")
        except Exception as err:  # a bug: still end the goal with a reason, never silently
            self.log.error(f"internal error:\n{traceback.format_exc()}")
            outcome = RunOutcome(
                "aborted", f"aborted: internal error {type(err).__name__}: {err} (see the log)"
            )
        finally:
            for remote in self.remotes:
                remote.close()
        report_path = self._write_report(outcome, time.monotonic() - started)
        self.feedback("done", f"{outcome.outcome}: {outcome.explanation}")
        result = RunTask.Result(
            success=outcome.outcome == "completed",
            outcome=outcome.outcome,
            executed_steps=self.executed,
            handled_situations=self.handled,
            explanation=outcome.explanation,
            report_path=str(report_path) if report_path else "",
        )
        if outcome.outcome == "canceled":
            self.goal.canceled()
        elif outcome.outcome == "completed":
            self.goal.succeed()
        else:
            self.goal.abort()
        self.log.info(f"{outcome.outcome}: {outcome.explanation}")
        return result

    # ---------------------------------------------------------------------- run
    def _run(self) -> RunOutcome:
        spec = resolve_task(self.goal.request.task)
        self._drain_stale_situations()
        self.loop = self._make_loop(spec)
        self.loop.report.listeners.append(self._on_report_event)
        self.feedback("planning", f"planning {spec.name}: {spec.description}")
        self.loop.plan()
        retries = 0
        while True:
            self._check_cancel()
            self._handle_situations()
            step = self.loop.next_step()
            if step is None:
                break
            ok, message = self._execute(step)
            if ok:
                self.executed.append(step_to_msg(step))
                self.loop.step_done(True)
                continue
            retries += 1
            self.feedback("executing", f"step failed: {step}: {message}")
            if retries > self.node.max_step_retries:
                return RunOutcome("aborted", f"aborted: {step} failed: {message}")
            self.loop.step_done(False)
        phase = self.loop.phase
        if phase is Phase.COMPLETED:
            return RunOutcome("completed", self.loop.explanation())
        if phase is Phase.NO_SOLUTION:
            return RunOutcome("no_solution", self.loop.explanation())
        return RunOutcome("aborted", f"aborted: the loop stopped in phase {phase.value}")

    def _make_loop(self, spec: TaskSpec) -> OpenWorldPlanner:
        task = spec.load()
        if self.node.present:
            task = edits.keep_objects(task, [*spec.task_objects, *self.node.present])
        commonsense = RemoteCommonsense(
            self.node, spec.name, self.node.commonsense_timeout_s, self.clock
        )
        planner = RemotePlanner(self.node, self.clock)
        self.remotes = [commonsense, planner]
        loop = OpenWorldPlanner(
            task,
            model=None,
            planner=planner,
            monitor=commonsense,
            acquirer=commonsense,
            predicates=commonsense,
            phrases=ActionPhrases(spec.phrases),
            description=spec.description,
            task_name=spec.name,
            settings=CowpSettings(planner_timeout_s=self.node.planner_timeout_s),
        )
        return loop

    def _handle_situations(self) -> None:
        """Give the loop every situation that arrived; COWP checks the remaining plan."""
        assert self.loop is not None
        while True:
            try:
                text, perceive_s = self.node.situations.get_nowait()
            except queue.Empty:
                return
            self.clock.add("perceive", perceive_s)
            reaction = self.loop.observe(text)
            self.handled.append(text)
            self.feedback("monitoring", REACTION_TEXT[reaction])

    def _drain_stale_situations(self) -> None:
        """Situations from before this goal belong to an earlier task."""
        while not self.node.situations.empty():
            self.node.situations.get_nowait()

    # ------------------------------------------------------------------ execute
    def _execute(self, step: PlanStep) -> tuple[bool, str]:
        assert self.loop is not None
        self.step_index = len(self.executed)
        self.feedback("executing", f"doing: {self.loop.describe(step)} {step}")
        message = step_to_msg(step)  # the executor announces it on /cowp/current_step
        self.node.step_started_at = time.monotonic()
        client = self.node.skill_client
        if not client.wait_for_server(timeout_sec=10.0):
            raise CowpError(
                f"the executor is not serving {EXECUTE_SKILL_ACTION}",
                hint="is the executor node running?",
            )
        handle = self._wait(
            client.send_goal_async(ExecuteSkill.Goal(step=message)), 30.0, "step accepted"
        )
        if not handle.accepted:
            return False, "the executor rejected the step"
        started = time.monotonic()
        result_future = handle.get_result_async()
        deadline = time.monotonic() + self.node.step_timeout_s
        gone_since: float | None = None
        while not result_future.done():
            if self.goal.is_cancel_requested:
                handle.cancel_goal_async()
                raise GoalCanceledError
            if time.monotonic() > deadline:
                handle.cancel_goal_async()
                return False, f"no result within {self.node.step_timeout_s:.0f} s"
            if client.server_is_ready():
                gone_since = None
            elif (
                gone_since := gone_since or time.monotonic()
            ) and time.monotonic() - gone_since > 3:
                raise CowpError(f"the executor went away while doing {step} (its node died?)")
            time.sleep(0.05)
        self.clock.add("execute", time.monotonic() - started)
        result = result_future.result().result
        return bool(result.success), result.message

    def _wait(self, future, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        while not future.done():
            if time.monotonic() > deadline:
                raise CowpError(f"the executor did not answer ({what}) within {timeout_s:.0f} s")
            time.sleep(0.02)
        return future.result()

    def _check_cancel(self) -> None:
        if self.goal.is_cancel_requested:
            raise GoalCanceledError

    # ----------------------------------------------------------------- feedback
    def _on_report_event(self, event: Event) -> None:
        """The loop's own account (plans, questions, answers, PDDL changes) as feedback.

        Steps and the outcome are told by the run itself, with the robot's view.
        """
        phase = EVENT_PHASES.get(event.kind)
        if phase is not None:
            self.feedback(phase or self.phase, event.text)

    def feedback(self, phase: str, event: str) -> None:
        self.phase = phase
        plan = list(self.loop.remaining_steps) if self.loop else []
        message = RunTask.Feedback(
            phase=phase, plan=steps_to_msgs(plan), step_index=self.step_index, last_event=event
        )
        self.goal.publish_feedback(message)
        self.log.info(f"[{phase}] {event}")

    def _write_report(self, outcome: RunOutcome, seconds: float) -> Path | None:
        document = {
            "task": self.goal.request.task,
            "outcome": outcome.outcome,
            "explanation": outcome.explanation,
            "seconds": round(seconds, 3),
            "executed_steps": [f"({' '.join([s.action, *s.arguments])})" for s in self.executed],
            "handled_situations": self.handled,
            "timing": self.clock.to_dict(),
        }
        if self.loop is not None:
            report = self.loop.finish_report()
            document["cowp"] = report.to_dict()
        try:
            self.node.report_dir.mkdir(parents=True, exist_ok=True)
            path = self.node.report_dir / f"run_{time.strftime('%Y%m%d_%H%M%S')}.json"
            path.write_text(json.dumps(document, indent=2))
        except OSError as err:
            self.log.error(f"could not write the report to {self.node.report_dir}: {err}")
            return None
        return path.resolve()


def resolve_task(text: str) -> TaskSpec:
    """A task by name, alias, dataset id or description ("serve water")."""
    words = "_".join(text.strip().lower().replace("-", " ").split())
    if not words:
        raise CowpError("the goal names no task", hint="e.g. serve_water")
    return get_task(words)


def main(args: list[str] | None = None) -> None:
    run_node("task_manager", TaskManager, MultiThreadedExecutor, args=args)


if __name__ == "__main__":
    main()
