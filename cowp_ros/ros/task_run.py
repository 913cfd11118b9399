"""One RunTask goal of the task manager: a run session over the graph's ports.

The loop is the core's `OpenWorldPlanner`, built for the goal's task with the graph's
ports: the planner and the reasoning are the `planner` and `commonsense` nodes'
services (`cowp_ros.ros.clients`), and the robot is `GraphRobot`. The run itself (drive,
end, report) is the ROS-free `RunSession` that `cowp run` uses too; what is the graph's
own is told here: the feedback a person reads (phase, current plan, step index,
event), the executed steps and handled situations of the result, and the report's
`graph` section with the model that answered the commonsense node and its usage.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rclpy.action.server import ServerGoalHandle

from cowp_interfaces.action import RunTask
from cowp_interfaces.msg import PlanStep as PlanStepMsg
from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.driver import DriveListener, Outcome, RetryPolicy
from cowp_ros.cowp.events import FeedbackPhase
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner, Reaction
from cowp_ros.cowp.ports import StepOutcome
from cowp_ros.cowp.report import Event
from cowp_ros.cowp.session import RunEnd, RunSession
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage
from cowp_ros.methods.registry import DEFAULT_METHOD, LoopParts, Reasoners, graph_method
from cowp_ros.planning import PlanStep
from cowp_ros.ros.clients.commonsense_client import CommonsenseClient
from cowp_ros.ros.clients.peer_method import ask_peer_method
from cowp_ros.ros.clients.phase_clock import PhaseClock
from cowp_ros.ros.clients.planner_client import PlannerClient
from cowp_ros.ros.clients.world_client import present_task
from cowp_ros.ros.conversions import step_to_msg, steps_to_msgs
from cowp_ros.ros.graph_robot import GraphRobot
from cowp_ros.ros.run_context import RunContext
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases
from cowp_ros.tasks.presence import Presence

PEER_TIMEOUT_S = 10.0
"""How long a run waits for the commonsense node to say which method it runs."""


class TaskRun:
    """One RunTask goal: the loop, the feedback, the executed steps, the report."""

    def __init__(self, context: RunContext, goal_handle: ServerGoalHandle) -> None:
        self.context = context
        self.goal = goal_handle
        self.log = context.node.get_logger()
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
        self.session = RunSession(
            goal_handle.request.task,
            cancel=self.cancel,
            retries=RetryPolicy(max_retries=context.params.max_step_retries),
            listener=DriveListener(
                on_situation=self._on_situation, on_step=self._on_step, on_outcome=self._on_outcome
            ),
        )

    @property
    def goal_id(self) -> bytes:
        return bytes(self.goal.goal_id.uuid)

    # ------------------------------------------------------------------- outcome
    def result(self) -> RunTask.Result:
        started = time.monotonic()
        try:
            end = self.session.run(self._compose)
        finally:
            for client in self.clients:
                client.close()
        if self.session.bug:
            self.log.error(f"internal error:\n{self.session.bug}")
        if end.outcome is Outcome.CANCELED and not self.goal.is_cancel_requested:
            # Only a client's cancel makes a goal canceled; anything else aborts it.
            end = RunEnd(Outcome.ABORTED, f"aborted: {self.cancel.reason}")
            self.session.ended(end)
        report_path = self._write_report(time.monotonic() - started)
        self.feedback(FeedbackPhase.DONE, end.told())
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
        self.context.outcomes.publish(self.goal, result)
        self.log.info(end.told())
        self.finished.set()
        return result

    # ---------------------------------------------------------------------- run
    def _compose(self) -> tuple[OpenWorldPlanner, GraphRobot]:
        spec = resolve_task(self.goal.request.task)
        self.context.inbox.reset()  # situations from before this goal belong to an earlier task
        loop = self.loop = self._make_loop(spec)
        loop.report.listeners.append(self._on_report_event)
        self.feedback(FeedbackPhase.PLANNING, f"planning {spec.name}: {spec.description}")
        robot = GraphRobot(
            self.context.inbox,
            self.context.skill_client,
            self.context.params.step_timeout_s,
            self.clock,
            self.presence,
        )
        return loop, robot

    def _make_loop(self, spec: TaskSpec) -> OpenWorldPlanner:
        context, params = self.context, self.context.params
        kept = context.kept  # made when the node started (kept_clients.py)
        task, self.presence = present_task(
            spec,
            world_node=params.world_node,
            configured=list(context.present),
            timeout_s=params.planner_timeout_s,
            cancel=self.cancel,
            clients=kept,
        )
        self.log.info(f"planning with the objects of {self.presence.source}")
        phrases = ActionPhrases(spec.phrases)
        commonsense = CommonsenseClient(
            context.node,
            task_name=spec.name,
            description=spec.description,
            phrases=phrases,
            timeout_s=params.commonsense_timeout_s,
            clock=self.clock,
            cancel=self.cancel,
            clients=kept,
            cancel_publisher=context.commonsense_cancel,
        )
        planner = PlannerClient(context.node, clock=self.clock, cancel=self.cancel, clients=kept)
        self.clients = [commonsense, planner]
        # The method is the commonsense node's (chosen there once, read-only): the loop's
        # side of it is built here around that node's answers.
        peer = ask_peer_method(
            context.node,
            timeout_s=PEER_TIMEOUT_S,
            cancel=self.cancel,
            clients=kept,
        )
        method = graph_method(peer.method if peer is not None else DEFAULT_METHOD)
        # The method's per-model settings follow the model that answers.
        model_name = peer.model if peer is not None else ""
        ports = Reasoners(monitor=commonsense, facts=commonsense, acquirer=commonsense)
        settings = CowpSettings(
            planner_timeout_s=params.planner_timeout_s,
            prepare_monitor=params.prepare_monitor,
        )
        loop = method.loop(
            LoopParts(
                task=task,
                task_name=spec.name,
                description=spec.description,
                phrases=phrases,
                ports=ports,
                planner=planner,
                model_name=model_name,
                settings=settings,
                cancel=self.cancel,
            )
        )
        if not isinstance(loop, OpenWorldPlanner):  # the feedback tells its remaining steps
            raise CowpError(
                f"the {method.name} method's loop is not COWP's, which the task manager drives",
                hint="run it in one process: cowp run --method " + method.name,
            )
        return loop

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

    def _write_report(self, seconds: float) -> Path | None:
        """The run's report in `cowp run`'s schema (`cowp/report.py`), naming the
        model that answered the commonsense node and what it spent; what only the graph
        knows is its `graph` section."""
        commonsense = self._commonsense()
        usage = Usage()
        for client in commonsense:
            usage.add(client.usage)
        self.session.answered_by(
            next((c.model_name for c in commonsense if c.model_name), ""), usage
        )
        graph = {
            "goal": self.goal.request.task,
            "seconds": round(seconds, 3),
            "executed_steps": [f"({' '.join([s.action, *s.arguments])})" for s in self.executed],
            "handled_situations": self.handled,
            "asked_ahead": [v.question for c in commonsense for v in c.asked_ahead],
            "situations_dropped": dict(self.context.inbox.dropped),
            "timing": self.clock.to_dict(),
            "requests": {
                "check_plan": sum(c.calls["check"] for c in commonsense),
                "acquire_knowledge": sum(c.calls["acquire"] for c in commonsense),
            },
        }
        try:
            path = self.session.write_new(
                self.context.report_dir, self.goal_id.hex()[:12], graph=graph
            )
        except (CowpError, ValueError) as err:
            self.log.error(f"could not write the report to {self.context.report_dir}: {err}")
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
