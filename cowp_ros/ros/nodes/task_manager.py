"""task_manager: the `RunTask` action server that runs COWP across the graph.

For each goal it runs the core's `OpenWorldPlanner` on COWP's driver
(`cowp_ros.cowp.driver.drive`), the same loop and driver as `cowp run` and the
benchmark. Only the ports differ: the planner and the reasoning are the `planner` and
`commonsense` nodes' services (`cowp_ros.ros.clients`), and the robot is `GraphRobot`,
which executes each step through the executor's `ExecuteSkill` action and reports the
situations that arrived on `/cowp/situations` from whatever saw them (the camera
detector, the simulation, a bag, a person with `ros2 topic pub`). They wait in a
bounded, deduplicated inbox and reach the loop before the next step, which is when
COWP's Plan Monitor checks the remaining plan.

The feedback is the narrative a person reads: phase, current plan, step index, event.
A cancel is honoured at once, also while the commonsense node is thinking or a skill
is running: every wait of the run watches the run's cancel token. Every failure ends
the goal with an outcome and an explanation that says what failed (a node that died, a
step the robot could not do, no solution); nothing hangs. A JSON report of every
question, PDDL change and plan is written for each run, whatever its outcome; a
shutdown (Ctrl-C) ends the run in flight with a result rather than dropping it.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from cowp_interfaces.action import ExecuteSkill, RunTask
from cowp_interfaces.msg import PlanStep as PlanStepMsg
from cowp_interfaces.msg import Situation as SituationMsg
from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.driver import (
    DriveEnd,
    DriveListener,
    DriveResult,
    Outcome,
    RetryPolicy,
    drive,
)
from cowp_ros.cowp.events import FeedbackPhase
from cowp_ros.cowp.frugal_acquirer import FrugalAcquirer
from cowp_ros.cowp.grounded import DEFAULT_ENTRY, GroundedSettings, shared_embedder
from cowp_ros.cowp.inbox import InboxLimits, SituationInbox
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner, Reaction
from cowp_ros.cowp.policies import GROUNDED_POLICIES, PAPER_POLICIES
from cowp_ros.cowp.ports import Acquirer, StepOutcome
from cowp_ros.cowp.report import Event, strict_json
from cowp_ros.cowp.report_file import reports_folder, write_new_report
from cowp_ros.cowp.run_report import report_document, usage_summary
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage
from cowp_ros.planning import PlanStep
from cowp_ros.planning.tidy import TidyPlanner
from cowp_ros.ros.clients.commonsense_client import CommonsenseClient
from cowp_ros.ros.clients.phase_clock import PhaseClock
from cowp_ros.ros.clients.planner_client import PlannerClient
from cowp_ros.ros.clients.world_client import present_task
from cowp_ros.ros.conversions import situation_from_msg, step_to_msg, steps_to_msgs
from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.goal_limits import goal_problem
from cowp_ros.ros.names import EXECUTE_SKILL_ACTION, RUN_TASK_ACTION, SITUATIONS_TOPIC
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, at_least, declare_parameters, one_of, positive
from cowp_ros.ros.waiting import run_action
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases
from cowp_ros.tasks.presence import Presence

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
        "reasoner",
        "grounded",
        "situation handling: grounded (the frugal acquirer's order, tidy plans, failures "
        "blame a harmless-judged situation) or cowp (the paper's); as the commonsense node's",
        one_of("grounded", "cowp"),
    ),
    Param(
        "report_dir",
        "",
        "where each run's JSON report is written ('' = $COWP_REPORTS_DIR, else build/reports)",
    ),
    Param("planner_timeout_s", 60.0, "one planning call", positive),
    Param("commonsense_timeout_s", 600.0, "one monitor or acquirer request", positive),
    Param("step_timeout_s", 300.0, "one executed step", positive),
    Param(
        "max_step_retries",
        1,
        "a failed step is replanned and tried again this many times in a row; the next "
        "failure in a row aborts the run",
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
        "on shutdown, how long the run in flight has to end and send its result",
        positive,
    ),
)

EXECUTOR_WAIT_S = 10.0
"""How long a run waits for the executor's action server to appear."""


class TaskManager(Node):
    def __init__(self) -> None:
        super().__init__("task_manager")
        self.params = declare_parameters(self, PARAMETERS)
        self.present = [o for o in self.params["present_objects"] if o]
        self.report_dir = reports_folder(self.params["report_dir"])
        self.inbox = SituationInbox(
            InboxLimits(
                max_waiting=self.params["max_waiting_situations"],
                max_per_run=self.params["max_situations_per_task"],
                max_per_s=self.params["max_situation_rate_hz"],
            )
        )
        self.step_started_at = time.monotonic()
        group = ReentrantCallbackGroup()
        self.create_subscription(
            SituationMsg, SITUATIONS_TOPIC, self.on_situation, 20, callback_group=group
        )
        self.skill_client: ActionClient[Any, Any, Any] = ActionClient(
            self, ExecuteSkill, EXECUTE_SKILL_ACTION, callback_group=group
        )
        self._busy = threading.Lock()
        self._active: TaskRun | None = None
        self.server = ActionServer(
            self,
            RunTask,
            RUN_TASK_ACTION,
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            cancel_callback=self.on_cancel,
            callback_group=group,
        )
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
        problem = goal_problem(goal)
        if problem is not None:
            self.get_logger().warning(f"rejected a RunTask goal: {problem}")
            return GoalResponse.REJECT
        if self._busy.locked():
            self.get_logger().warning("rejected a RunTask goal: a task is already running")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        run = self._active
        if run is not None and run.goal is goal_handle:
            run.cancel.cancel("canceled by the user")
        return CancelResponse.ACCEPT

    def execute(self, goal_handle: ServerGoalHandle) -> RunTask.Result:
        # Two goals sent together can both pass on_goal before either runs: the second
        # to get here ends at once with a reason instead of waiting for the first.
        if not self._busy.acquire(blocking=False):
            self.get_logger().warning("aborted a RunTask goal: a task is already running")
            goal_handle.abort()
            return RunTask.Result(
                success=False,
                outcome="aborted",
                explanation="aborted: a task is already running (one goal at a time)",
            )
        try:
            run = TaskRun(self, goal_handle)
            self._active = run
            try:
                return run.result()
            finally:
                self._active = None
        finally:
            self._busy.release()

    def on_shutdown(self) -> None:
        """End the run in flight (it reports `aborted: shutting down`) and give it
        `shutdown_grace_s` to send its result before the node goes."""
        run = self._active
        if run is None:
            return
        run.cancel.cancel("the task manager is shutting down")
        run.finished.wait(self.params["shutdown_grace_s"])
        time.sleep(0.3)  # the result goes out on the executor's threads


class GraphRobot:
    """The robot as the graph offers it: the executor node's `ExecuteSkill` action, and
    the situations waiting in the task manager's inbox (a `Robot` port)."""

    def __init__(self, node: TaskManager, clock: PhaseClock, presence: Presence) -> None:
        self.node = node
        self.clock = clock
        self.presence = presence

    def perceive(self, next_step: PlanStep) -> list[Situation]:
        arrivals = self.node.inbox.take()
        for arrival in arrivals:
            self.clock.add("perceive", max(0.0, arrival.at - self.node.step_started_at))
        return [a.situation for a in arrivals]

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        refusal = self.presence.refusal(step)  # never send the robot for what is not there
        if refusal is not None:
            return StepOutcome(False, reason=refusal)
        client = self.node.skill_client
        if not client.wait_for_server(timeout_sec=EXECUTOR_WAIT_S):
            raise CowpError(
                f"the executor is not serving {EXECUTE_SKILL_ACTION}",
                hint="is the executor node running?",
            )
        self.node.step_started_at = started = time.monotonic()
        outcome, result = run_action(
            client,
            ExecuteSkill.Goal(step=step_to_msg(step)),  # the executor announces it
            server=EXECUTE_SKILL_ACTION,
            kind="skill",
            cancel=cancel,
            server_s=EXECUTOR_WAIT_S,
            motion_s=self.node.params["step_timeout_s"],
            watch_server=True,
        )
        if not outcome.ok and not client.server_is_ready():
            raise CowpError(f"the executor went away while doing {step} (its node died?)")
        self.clock.add("execute", time.monotonic() - started)
        if result is not None and outcome.ok:
            return StepOutcome(bool(result.success), reason=result.message)
        if result is not None and result.message:
            return StepOutcome(False, reason=result.message)
        return StepOutcome(False, reason=outcome.message)


@dataclass
class RunEnd:
    outcome: Outcome
    explanation: str


def told(end: RunEnd) -> str:
    """The end as one line: "aborted: ...", never "aborted: aborted: ..."."""
    prefix = f"{end.outcome.value}:"
    return end.explanation if end.explanation.startswith(prefix) else f"{prefix} {end.explanation}"


class TaskRun:
    """One RunTask goal: the loop, the feedback, the executed steps, the report."""

    def __init__(self, node: TaskManager, goal_handle: ServerGoalHandle) -> None:
        self.node = node
        self.goal = goal_handle
        self.log = node.get_logger()
        self.cancel = CancelToken()
        self.finished = threading.Event()
        self.executed: list[PlanStepMsg] = []
        self.handled: list[str] = []
        self.loop: OpenWorldPlanner | None = None
        self.step_index = -1
        self.phase = FeedbackPhase.PLANNING
        self.clock = PhaseClock()
        self.clients: list[PlannerClient | CommonsenseClient] = []
        self.presence = Presence(None, "the problem file")

    # ------------------------------------------------------------------- outcome
    def result(self) -> RunTask.Result:
        started = time.monotonic()
        try:
            end = self._run()
        except CowpError as err:
            end = RunEnd(Outcome.ABORTED, f"aborted: {err.message}")
        except Exception as err:  # a bug: still end the goal with a reason, never silently
            self.log.error(f"internal error:\n{traceback.format_exc()}")
            end = RunEnd(
                Outcome.ABORTED,
                f"aborted: internal error {type(err).__name__}: {err} (see the log)",
            )
        finally:
            for client in self.clients:
                client.close()
        if end.outcome is Outcome.CANCELED and not self.goal.is_cancel_requested:
            # Only a client's cancel makes a goal canceled; anything else aborts it.
            end = RunEnd(Outcome.ABORTED, f"aborted: {self.cancel.reason}")
        report_path = self._write_report(end, time.monotonic() - started)
        self.feedback(FeedbackPhase.DONE, told(end))
        result = RunTask.Result(
            success=end.outcome is Outcome.COMPLETED,
            outcome=end.outcome.value,
            executed_steps=self.executed,
            handled_situations=self.handled,
            explanation=end.explanation,
            report_path=str(report_path) if report_path else "",
        )
        if end.outcome is Outcome.CANCELED:
            self.goal.canceled()
        elif end.outcome is Outcome.COMPLETED:
            self.goal.succeed()
        else:
            self.goal.abort()
        self.log.info(told(end))
        self.finished.set()
        return result

    # ---------------------------------------------------------------------- run
    def _run(self) -> RunEnd:
        spec = resolve_task(self.goal.request.task)
        self.node.inbox.reset()  # situations from before this goal belong to an earlier task
        loop = self.loop = self._make_loop(spec)
        loop.report.listeners.append(self._on_report_event)
        self.feedback(FeedbackPhase.PLANNING, f"planning {spec.name}: {spec.description}")
        listener = DriveListener(
            on_situation=self._on_situation, on_step=self._on_step, on_outcome=self._on_outcome
        )
        result = drive(
            loop,
            GraphRobot(self.node, self.clock, self.presence),
            cancel=self.cancel,
            retries=RetryPolicy(max_retries=self.node.params["max_step_retries"]),
            listener=listener,
        )
        return self._end_of(result)

    def _end_of(self, result: DriveResult) -> RunEnd:
        assert self.loop is not None
        if result.end is DriveEnd.CANCELED:
            return RunEnd(Outcome.CANCELED, "canceled by the user")
        if result.end is DriveEnd.STEP_FAILED:
            return RunEnd(Outcome.ABORTED, f"aborted: {result.failed_step} failed: {result.reason}")
        if result.end in (DriveEnd.COMPLETED, DriveEnd.NO_SOLUTION):
            return RunEnd(result.end.outcome, self.loop.explanation())
        return RunEnd(Outcome.ABORTED, f"aborted: {result.explanation}")

    def _make_loop(self, spec: TaskSpec) -> OpenWorldPlanner:
        task, self.presence = present_task(
            self.node,
            spec,
            world_node=self.node.params["world_node"],
            configured=self.node.present,
            timeout_s=self.node.params["planner_timeout_s"],
            cancel=self.cancel,
        )
        self.log.info(f"planning with the objects of {self.presence.source}")
        phrases = ActionPhrases(spec.phrases)
        commonsense = CommonsenseClient(
            self.node,
            task_name=spec.name,
            description=spec.description,
            phrases=phrases,
            timeout_s=self.node.params["commonsense_timeout_s"],
            clock=self.clock,
            cancel=self.cancel,
        )
        planner = PlannerClient(self.node, clock=self.clock, cancel=self.cancel)
        self.clients = [commonsense, planner]
        settings = CowpSettings(planner_timeout_s=self.node.params["planner_timeout_s"])
        grounded = self.node.params["reasoner"] == "grounded"
        acquirer: Acquirer = commonsense
        if grounded:
            chosen = GroundedSettings.for_model(DEFAULT_ENTRY)
            acquirer = FrugalAcquirer(
                commonsense,
                embedder=shared_embedder(),
                max_candidates=chosen.max_candidates,
                min_similarity=chosen.min_similarity,
            )
        return OpenWorldPlanner(
            task,
            model=None,
            planner=TidyPlanner(planner) if grounded else planner,
            monitor=commonsense,
            acquirer=acquirer,
            predicates=commonsense,
            phrases=phrases,
            description=spec.description,
            task_name=spec.name,
            settings=settings,
            policies=GROUNDED_POLICIES if grounded else PAPER_POLICIES,
            cancel=self.cancel,
        )

    # ------------------------------------------------------------- the drive's hooks
    def _on_situation(self, situation: Situation, reaction: object) -> None:
        self.handled.append(situation.text)
        if isinstance(reaction, Reaction):
            self.feedback(FeedbackPhase.MONITORING, reaction.text)

    def _on_step(self, step: PlanStep) -> None:
        assert self.loop is not None
        self.step_index = len(self.executed)
        self.feedback(FeedbackPhase.EXECUTING, f"doing: {self.loop.describe(step)} {step}")

    def _on_outcome(self, step: PlanStep, outcome: StepOutcome) -> None:
        if outcome.executed:
            self.executed.append(step_to_msg(step))
        elif not outcome.situations and not self.cancel.requested:
            self.feedback(FeedbackPhase.EXECUTING, f"step failed: {step}: {outcome.reason}")

    # ----------------------------------------------------------------- feedback
    def _on_report_event(self, event: Event) -> None:
        """The loop's own account (plans, questions, answers, PDDL changes) as feedback.

        Steps and the outcome are told by the run itself, with the robot's view.
        """
        if event.kind.told_as_feedback:
            self.feedback(event.kind.phase or self.phase, event.text)

    def feedback(self, phase: FeedbackPhase, event: str) -> None:
        self.phase = phase
        plan = list(self.loop.remaining_steps) if self.loop else []
        message = RunTask.Feedback(
            phase=phase.value,
            plan=steps_to_msgs(plan),
            step_index=self.step_index,
            last_event=event,
        )
        self.goal.publish_feedback(message)
        self.log.info(f"[{phase.value}] {event}")

    def _write_report(self, end: RunEnd, seconds: float) -> Path | None:
        """The run's report in `cowp run`'s schema (`cowp/run_report.py`), naming the
        model that answered the commonsense node and what it spent; what only the graph
        knows is its `graph` section."""
        commonsense = self._commonsense()
        report = None
        if self.loop is not None:
            report = self.loop.finish_report()
            report.model = next((c.model_name for c in commonsense if c.model_name), "")
            usage = Usage()
            for client in commonsense:
                usage.add(client.usage)
            report.usage = usage_summary(usage)
        graph = {
            "goal": self.goal.request.task,
            "seconds": round(seconds, 3),
            "executed_steps": [f"({' '.join([s.action, *s.arguments])})" for s in self.executed],
            "handled_situations": self.handled,
            "situations_dropped": dict(self.node.inbox.dropped),
            "timing": self.clock.to_dict(),
            "requests": {
                "check_plan": sum(c.calls["check"] for c in commonsense),
                "acquire_knowledge": sum(c.calls["acquire"] for c in commonsense),
            },
        }
        document = report_document(
            report,
            task=self.goal.request.task,
            outcome=end.outcome.value,
            explanation=end.explanation,
            graph=graph,
        )
        goal_id = bytes(self.goal.goal_id.uuid).hex()[:12]
        try:
            stem = str(document["task"]) or "run"
            path = write_new_report(strict_json(document), self.node.report_dir, stem, goal_id)
        except (CowpError, ValueError) as err:
            self.log.error(f"could not write the report to {self.node.report_dir}: {err}")
            return None
        return path.resolve()

    def _commonsense(self) -> list[CommonsenseClient]:
        return [c for c in self.clients if isinstance(c, CommonsenseClient)]


def resolve_task(text: str) -> TaskSpec:
    """A task by name, alias, dataset id or description ("serve water")."""
    words = "_".join(text.strip().lower().replace("-", " ").split())
    if not words:
        raise CowpError("the goal names no task", hint="e.g. serve_water")
    return get_task(words)


def main(args: list[str] | None = None) -> None:
    run_node("task_manager", TaskManager, SteadyMultiThreadedExecutor, args=args)


if __name__ == "__main__":
    main()
