"""The commonsense node's services as the loop's `Monitor`, `FactMaker` and `Acquirer`.

`OpenWorldPlanner` asks these ports; in one process they are the core's own classes, in
the graph the task manager hands it this client, which sends the same questions to the
`commonsense` node and rebuilds the core's answers from the responses. So the COWP
method runs the same code path whether it is tested with pytest or runs across
processes.

One `CheckPlan` call per situation: the steps go together, and the situation's fact
comes back in the same answer when a step is blocked. Verdicts are remembered for the
run, so a situation re-checked after a replan asks the node only about steps it has not
judged yet (a flood of repeated situations costs no questions). Every call has a
deadline, notices a node that died mid-call, and ends at once when the run is
cancelled. A new plan is sent once with no situation, without waiting (`prepare`), so
that a method that asks what the plan's objects need does so while the robot moves; the
node answers a situation that comes meanwhile first (`llm.turns`). Each request carries
an id; a request the run no longer waits for (cancelled, or still in flight when the run
ends) has its id published on `/cowp/commonsense_cancel`, and the node asks none of its
remaining questions.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from rclpy.client import Client
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from cowp_interfaces.srv import AcquireKnowledge, CheckPlan
from cowp_ros.cowp.answers import CandidateAssessment, MonitorVerdict, PlanCheck, Selection
from cowp_ros.cowp.cancel import NEVER, CancelToken, RunCancelledError
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import Usage
from cowp_ros.methods.paper.predicates import SituationFact
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.clients.phase_clock import PhaseClock
from cowp_ros.ros.conversions import (
    TaskContext,
    assessment_from_response,
    check_request,
    fact_from_response,
    plan_check_from_response,
    put_task_context,
    put_task_words,
    selection_from_response,
    usage_from_response,
)
from cowp_ros.ros.names import ACQUIRE_SERVICE, CHECK_PLAN_SERVICE, COMMONSENSE_CANCEL_TOPIC
from cowp_ros.ros.waiting import call_service
from cowp_ros.tasks.phrases import ActionPhrases


def cancel_publisher(node: Node) -> Any:
    """A publisher on `/cowp/commonsense_cancel`, made once for a node's life, so that
    the commonsense node has matched it by the time a cancel is sent."""
    qos = QoSProfile(depth=64, reliability=ReliabilityPolicy.RELIABLE)
    return node.create_publisher(String, COMMONSENSE_CANCEL_TOPIC, qos)


@dataclass(frozen=True)
class _Judged:
    """One step as the node's decision judged it, and the questions about it, if any (a
    decision of several kinds of question asks them all about the step it blocks)."""

    suitable: bool
    verdicts: tuple[MonitorVerdict, ...]
    reason: str


class CommonsenseClient:
    """Plan monitor, fact maker and knowledge acquirer over the `commonsense` node."""

    def __init__(
        self,
        node: Node,
        *,
        task_name: str,
        description: str,
        phrases: ActionPhrases,
        timeout_s: float = 600.0,
        clock: PhaseClock | None = None,
        cancel: CancelToken = NEVER,
        clients: KeptClients | None = None,
        cancel_publisher: Any | None = None,
    ) -> None:
        """`clients`: the node's kept clients (a long-lived node passes its own, see
        kept_clients.py); without them the clients are this object's, destroyed by `close`.
        `cancel_publisher`: the node's publisher on `/cowp/commonsense_cancel` (kept for
        its life, so that it is matched when a cancel comes); None: no cancel is sent."""
        self.cancel_publisher = cancel_publisher
        self._in_flight: set[str] = set()
        self.node = node
        self.task_name = task_name
        self.description = description
        self.phrases = phrases
        self.timeout_s = timeout_s
        self.clock = clock
        self.cancel = cancel
        self._own_clients = clients is None
        self._clients = KeptClients(node) if clients is None else clients
        self.check_client: Client[Any, Any] = self._clients.get(CheckPlan, CHECK_PLAN_SERVICE)
        self.acquire_client: Client[Any, Any] = self._clients.get(AcquireKnowledge, ACQUIRE_SERVICE)
        self.calls = {"check": 0, "acquire": 0}
        self.model_name = ""
        """The model that answered, as the node names it ("" until it answered)."""
        self.usage = Usage()
        """What the node's model spent on this client's requests."""
        self.asked_ahead: list[MonitorVerdict] = []
        """The questions the node asked when given the plan (`prepare`), once answered."""
        self.prepared = threading.Event()
        """Set once the node answered (or failed) the plan sent by `prepare`."""
        self._lock = threading.Lock()  # usage also grows from the executor's thread
        self._judged: dict[tuple[PlanStep, str], _Judged] = {}
        self._facts: dict[str, SituationFact] = {}

    def _new_id(self, request: Any) -> str:
        request.request_id = uuid.uuid4().hex
        with self._lock:
            self._in_flight.add(request.request_id)
        return str(request.request_id)

    def _answered(self, request_id: str) -> None:
        with self._lock:
            self._in_flight.discard(request_id)

    def _cancel_one(self, request_id: str) -> None:
        self._answered(request_id)
        if self.cancel_publisher is not None:
            self.cancel_publisher.publish(String(data=request_id))

    def cancel_in_flight(self) -> None:
        """Tell the node that no request still in flight is wanted any more."""
        with self._lock:
            ids, self._in_flight = sorted(self._in_flight), set()
        if self.cancel_publisher is not None:
            for request_id in ids:
                self.cancel_publisher.publish(String(data=request_id))

    def close(self) -> None:
        self.cancel_in_flight()
        if self._own_clients:
            self._clients.close()

    def _context(self, task: PlanningTask) -> TaskContext:
        return TaskContext(self.task_name, self.description, self.phrases, task)

    def _call(self, client: Any, request: Any, what: str, phase: str) -> Any:
        started = time.monotonic()
        self.calls[phase] = self.calls.get(phase, 0) + 1
        request_id = self._new_id(request)
        try:
            response = call_service(
                client, request, timeout_s=self.timeout_s, what=what, cancel=self.cancel
            )
        except RunCancelledError:
            self.cancel_in_flight()  # the run is over: none of its requests is wanted
            raise
        except CowpError:
            self._cancel_one(request_id)  # timed out or gone: its questions are not wanted
            raise
        self._answered(request_id)
        if self.clock is not None:
            self.clock.add("monitor" if phase == "check" else phase, time.monotonic() - started)
        self._account(response)
        if not response.success:
            raise CowpError(f"the {what} failed: {response.message}")
        return response

    def _account(self, response: Any) -> None:
        """The model that answered and what it spent (from the executor's thread too)."""
        model, usage = usage_from_response(response)
        with self._lock:
            self.model_name = model or self.model_name
            self.usage.add(usage)

    # ---- Monitor -----------------------------------------------------------------------
    def check(
        self,
        steps: Sequence[PlanStep],
        situation: Situation,
        task: PlanningTask,
        focus: Sequence[str] = (),
    ) -> PlanCheck:
        """Remembered judgements first; the steps not judged yet in one request, up to
        the first step a remembered judgement already blocks.

        A decision judges every step it was given up to the one it blocks (all of them
        when the plan holds), whether or not a question was about that step; each is
        remembered with the question asked about it, if any.
        """
        known: list[_Judged | None] = []
        for step in steps:
            seen = self._judged.get((step, situation.text))
            known.append(seen)
            if seen is not None and not seen.suitable:
                break
        ask = [step for step, seen in zip(steps, known, strict=False) if seen is None]
        if ask:
            request = check_request(self._context(task), ask, situation, focus)
            response = self._call(self.check_client, request, "plan monitor", "check")
            self._remember(ask, situation, plan_check_from_response(response, ask, situation))
        verdicts: list[MonitorVerdict] = []
        for step, seen in zip(steps, known, strict=False):
            judged = self._judged.get((step, situation.text))
            if judged is None:  # the decision stopped at a blocked step before this one
                break
            verdicts.extend(
                verdict if seen is None else replace(verdict, repeated=True)
                for verdict in judged.verdicts
            )
            if not judged.suitable:
                return PlanCheck(
                    tuple(verdicts), step, self._facts.get(situation.text), judged.reason
                )
        return PlanCheck(tuple(verdicts))

    def prepare(self, steps: Sequence[PlanStep], task: PlanningTask) -> tuple[MonitorVerdict, ...]:
        """`MonitorPreparation`: a new plan, sent with no situation, without waiting. The
        node's method asks what the plan's objects will need, if it can, and keeps the
        answers; meanwhile the robot starts its first step, and a situation that comes
        first is decided before the questions still to be asked (the node takes the
        model in turns). What it asked is kept in `asked_ahead` (for the run's report)
        when the answer comes, unless the run was cancelled by then; none is returned
        here."""
        if not steps or self.cancel.is_set():
            return ()
        asked = list(steps)
        nothing = Situation("")
        request = check_request(self._context(task), asked, nothing)
        self.calls["check"] += 1
        request_id = self._new_id(request)
        future = self.check_client.call_async(request)

        def prepared(done: Any) -> None:
            self._answered(request_id)
            try:
                failure = done.exception()
                response = done.result() if failure is None else None
                if response is None or not response.success:
                    why = response.message if response is not None else str(failure or "no answer")
                    self.node.get_logger().warning(f"asking the plan's needs ahead failed: {why}")
                    return
                self._account(response)
                if self.cancel.is_set():  # the run is over: its report is written
                    return
                verdicts = plan_check_from_response(response, asked, nothing).verdicts
                with self._lock:
                    self.asked_ahead.extend(verdicts)
            finally:
                self.prepared.set()

        future.add_done_callback(prepared)
        return ()

    def _remember(self, asked: Sequence[PlanStep], situation: Situation, fresh: PlanCheck) -> None:
        """Each step the node's decision judged: up to the blocked one, else all."""
        end = asked.index(fresh.blocked) + 1 if fresh.blocked is not None else len(asked)
        about: dict[PlanStep, list[MonitorVerdict]] = {}
        for verdict in fresh.verdicts:
            about.setdefault(verdict.step, []).append(verdict)
        for step in asked[:end]:
            blocked = step == fresh.blocked
            self._judged[(step, situation.text)] = _Judged(
                suitable=not blocked,
                verdicts=tuple(about.get(step, ())),
                reason=fresh.reason if blocked else "",
            )
        if fresh.fact is not None:
            self._facts[situation.text] = fresh.fact

    # ---- FactMaker ---------------------------------------------------------------------
    def generate(
        self, situation: Situation | str, task: PlanningTask, focus: Sequence[str] = ()
    ) -> SituationFact:
        """The fact the node gave with its last block, else one request for it alone."""
        seen = Situation.of(situation)
        if seen.text in self._facts:
            return self._facts[seen.text]
        request = check_request(self._context(task), [], seen, focus)
        response = self._call(self.check_client, request, "plan monitor", "check")
        fact = fact_from_response(response, seen)
        self._facts[seen.text] = fact
        return fact

    # ---- Acquirer ----------------------------------------------------------------------
    def _acquire(self, task: PlanningTask | None, **fields: Any) -> AcquireKnowledge.Response:
        """`task` None: the question needs no PDDL (Prompt 3 compares kinds by name)."""
        request = AcquireKnowledge.Request(**fields)
        if task is not None:
            put_task_context(request, self._context(task))
        else:
            put_task_words(request, self.task_name, self.description, self.phrases)
        return self._call(self.acquire_client, request, "knowledge acquirer", "acquire")

    def rank(
        self,
        task: PlanningTask,
        role_type: str,
        candidates: Sequence[tuple[str, str]],
        task_description: str,
    ) -> list[tuple[str, str]]:
        """The node assesses one kind per request, in the loop's order."""
        return list(candidates)

    def enough(self, accepted: Sequence[CandidateAssessment]) -> bool:
        return False

    def assess(
        self,
        task: PlanningTask,
        role_type: str,
        actions: Sequence[str],
        candidate_type: str,
        example_object: str,
        task_description: str = "",
    ) -> CandidateAssessment:
        # The node reads the description from the request's task fields; none given
        # here means the role question is not to be asked (`Acquirer.assess`).
        response = self._acquire(
            task,
            role_type=role_type,
            actions=list(actions),
            candidate_types=[candidate_type],
            candidate_examples=[example_object],
            without_role_question=not task_description,
        )
        return assessment_from_response(response, candidate_type, example_object)

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
        response = self._acquire(
            None,
            role_type=role_type,
            candidate_types=[a.candidate_type for a in ranked],
            candidate_examples=[a.example_object for a in ranked],
            situation=situation,
            select_only=True,
        )
        return selection_from_response(response, [a.candidate_type for a in ranked])
