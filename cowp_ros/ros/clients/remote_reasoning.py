"""The core loop's planner, monitor, predicate generator and acquirer, over ROS 2.

`OpenWorldPlanner` (cowp_ros.cowp.loop) asks four collaborators; in one process they are the
core's own classes. In the graph, the task manager hands it these stand-ins instead,
which send the same questions to the `planner` and `commonsense` nodes and rebuild the
core's answer types from the responses. So the COWP method runs the same code path
whether it is tested with pytest or runs across processes.

Every call has a deadline and notices a server that disappears mid-call (its node
died): both end in a CowpError that names the service, so the task manager can abort
with a reason instead of hanging.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import Any

from rclpy.client import Client
from rclpy.node import Node

from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.cowp.acquirer import CandidateAssessment, RoleQuestion, Selection
from cowp_ros.cowp.monitor import MonitorVerdict
from cowp_ros.cowp.predicates import SituationFact
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Choice, YesNo
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.identifiers import check_identifier
from cowp_ros.planning import PlannerError, PlanResult, PlanStatus, PlanStep
from cowp_ros.ros.conversions import step_to_msg, steps_from_msgs

PLAN_SERVICE = "/cowp/plan"
CHECK_PLAN_SERVICE = "/cowp/check_plan"
ACQUIRE_SERVICE = "/cowp/acquire_knowledge"


class PhaseClock:
    """Seconds spent per phase of a run (plan, monitor, acquire, execute, ...)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds
        self.calls[phase] = self.calls.get(phase, 0) + 1

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {
            phase: {"seconds": round(total, 3), "calls": self.calls[phase]}
            for phase, total in self.seconds.items()
        }


def call_service(
    client: Client,
    request: Any,
    timeout_s: float,
    what: str,
    clock: PhaseClock | None = None,
    phase: str = "",
) -> Any:
    """Call and wait (from a callback of a multi-threaded executor); never hang.

    Waiting on an Event rather than spinning: the node's executor, on other threads,
    delivers the response. The time spent is added to `clock` under `phase`.
    """
    started = time.monotonic()
    if not client.wait_for_service(timeout_sec=min(10.0, timeout_s)):
        raise CowpError(
            f"{what}: service {client.srv_name} is not available",
            hint="is its node running? (`cowp bringup` reports nodes that died)",
        )
    future = client.call_async(request)
    done = threading.Event()
    future.add_done_callback(lambda _future: done.set())
    deadline = time.monotonic() + timeout_s
    while not done.wait(0.25):
        if time.monotonic() > deadline:
            client.remove_pending_request(future)
            raise CowpError(f"{what}: no answer from {client.srv_name} within {timeout_s:.0f} s")
        if not client.service_is_ready():
            client.remove_pending_request(future)
            raise CowpError(f"{what}: {client.srv_name} went away mid-call (its node died?)")
    response = future.result()
    if clock is not None:
        clock.add(phase or what, time.monotonic() - started)
    if response is None:
        raise CowpError(f"{what}: {client.srv_name} returned nothing")
    return response


def yes_no(text: str, p_yes: float, suitable: bool, unclear: bool, cached: bool) -> YesNo:
    """A YesNo rebuilt from response fields (-1 means no log-probabilities)."""
    return YesNo(
        answer=None if unclear else suitable,
        p_yes=None if p_yes < 0 else float(p_yes),
        text=text,
        cached=cached,
    )


class RemotePlanner:
    """`Planner` over the planner node's `Plan` service (PDDL text in, steps out)."""

    def __init__(
        self, node: Node, clock: PhaseClock | None = None, timeout_margin_s: float = 30.0
    ) -> None:
        self.node = node
        self.client = node.create_client(Plan, PLAN_SERVICE)
        self.clock = clock
        self.margin = timeout_margin_s
        self.name = "planner node"

    def close(self) -> None:
        self.node.destroy_client(self.client)

    def solve(self, task: PlanningTask, timeout_s: float = 60.0) -> PlanResult:
        request = Plan.Request(
            domain_pddl=task.domain_text(), problem_pddl=task.problem_text(), timeout_s=timeout_s
        )
        response = call_service(
            self.client, request, timeout_s + self.margin, "planning", self.clock, "plan"
        )
        if response.planner:
            self.name = response.planner
        if response.status == "error":
            raise PlannerError(f"the planner node failed: {response.message}")
        try:
            status = PlanStatus(response.status)
        except ValueError as err:
            raise PlannerError(f"the planner node answered status {response.status!r}") from err
        return PlanResult(
            status=status,
            planner=self.name,
            seconds=float(response.planning_time_s),
            steps=tuple(steps_from_msgs(response.steps)),
            detail=response.message,
        )


class RemoteCommonsense:
    """Plan monitor, predicate generator and knowledge acquirer over `commonsense`.

    Has the methods `OpenWorldPlanner` calls on each: `check` (monitor), `generate`
    (predicates), `assess` and `select` (acquirer).
    """

    def __init__(
        self,
        node: Node,
        task_name: str,
        timeout_s: float = 600.0,
        clock: PhaseClock | None = None,
    ) -> None:
        self.task_name = task_name
        self.timeout_s = timeout_s
        self.clock = clock
        self.node = node
        self.check_client = node.create_client(CheckPlan, CHECK_PLAN_SERVICE)
        self.acquire_client = node.create_client(AcquireKnowledge, ACQUIRE_SERVICE)

    def close(self) -> None:
        self.node.destroy_client(self.check_client)
        self.node.destroy_client(self.acquire_client)

    # ---- monitor ----------------------------------------------------------------------
    def _check(self, task: PlanningTask, steps: Sequence[PlanStep], situation: str, focus):
        request = CheckPlan.Request(
            task=self.task_name,
            domain_pddl=task.domain_text(),
            problem_pddl=task.problem_text(),
            steps=[step_to_msg(step) for step in steps],
            situation=situation,
            focus_objects=list(focus),
        )
        response = call_service(
            self.check_client, request, self.timeout_s, "plan monitor", self.clock, "monitor"
        )
        if not response.success:
            raise CowpError(f"the plan monitor failed: {response.message}")
        return response

    def check(self, step: PlanStep, situation: str, task: PlanningTask) -> MonitorVerdict:
        response = self._check(task, [step], situation, ())
        if not response.questions:
            raise CowpError("the plan monitor asked nothing about the step")
        suitable = bool(response.feasible)
        unclear = bool(response.unclear[0])
        answer = yes_no(
            response.answers[0], response.p_yes[0], suitable, unclear, bool(response.cached[0])
        )
        score = float(response.scores[0]) if response.scores else math.nan
        calibrated = not math.isnan(score) and not math.isnan(response.threshold)
        return MonitorVerdict(
            step,
            situation,
            response.questions[0],
            answer,
            suitable,
            unclear,
            score=score if calibrated else None,
            threshold=float(response.threshold) if calibrated else None,
            variant=response.variant if calibrated else None,
        )

    # ---- predicates -------------------------------------------------------------------
    def generate(
        self, situation: str, task: PlanningTask, focus: Sequence[str] = ()
    ) -> SituationFact:
        response = self._check(task, [], situation, focus)
        words = response.predicate.strip().strip("()").split()
        if not words:
            raise CowpError(f"the plan monitor gave no predicate for {situation!r}")
        # Checked here too: this process edits the PDDL, so it trusts no name it receives.
        atom = Atom(
            check_identifier(words[0], "predicate"),
            tuple(check_identifier(word, "object") for word in words[1:]),
        )
        subject = response.predicate_subject or None
        return SituationFact(
            situation, atom, subject, response.predicate_source, response.predicate_note
        )

    # ---- acquirer ---------------------------------------------------------------------
    def _acquire(self, task: PlanningTask | None, **fields: Any):
        """`task` None: the question needs no PDDL (Prompt 3 compares kinds by name)."""
        request = AcquireKnowledge.Request(
            task=self.task_name,
            domain_pddl=task.domain_text() if task else "",
            problem_pddl=task.problem_text() if task else "",
            **fields,
        )
        response = call_service(
            self.acquire_client,
            request,
            self.timeout_s,
            "knowledge acquirer",
            self.clock,
            "acquire",
        )
        if not response.success:
            raise CowpError(f"the knowledge acquirer failed: {response.message}")
        return response

    def assess(
        self,
        task: PlanningTask,
        role_type: str,
        actions: Sequence[str],
        candidate_type: str,
        example_object: str,
        task_description: str = "",
    ) -> CandidateAssessment:
        # The node asks the role question with the registered task's own description.
        del task_description
        response = self._acquire(
            task,
            role_type=role_type,
            actions=list(actions),
            candidate_types=[candidate_type],
            candidate_examples=[example_object],
        )
        assessment = CandidateAssessment(candidate_type, example_object)
        for index, question in enumerate(response.questions):
            suitable, unclear = bool(response.suitable[index]), bool(response.unclear[index])
            answer = yes_no(
                response.answers[index],
                response.p_yes[index],
                suitable,
                unclear,
                bool(response.cached[index]),
            )
            assessment.questions.append(
                RoleQuestion(response.question_actions[index], question, answer, suitable, unclear)
            )
        return assessment

    def select(
        self,
        accepted: Sequence[CandidateAssessment],
        role_type: str,
        task_description: str,
        situation: str,
    ) -> Selection:
        if not accepted:
            raise ValueError("select() needs at least one accepted candidate")
        # The acquirer's fallback ranks by confidence: send the most confident first.
        ranked = sorted(accepted, key=lambda a: -a.confidence)
        # The task description is the registered task's own; the node reads it there.
        response = self._acquire(
            None,
            role_type=role_type,
            candidate_types=[a.candidate_type for a in ranked],
            candidate_examples=[a.example_object for a in ranked],
            situation=situation,
            select_only=True,
        )
        chosen = response.chosen
        if chosen not in {a.candidate_type for a in accepted}:
            raise CowpError(f"the knowledge acquirer chose {chosen!r}, not a candidate")
        answer = None
        if response.selection_question:
            options = [a.candidate_type for a in ranked]
            answer = Choice(options.index(chosen), chosen, response.selection_answer)
        return Selection(chosen, response.selection_question or None, answer, response.how)
