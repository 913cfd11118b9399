"""commonsense: the LLM Plan Monitor (`CheckPlan`) and Knowledge Acquirer (`AcquireKnowledge`).

The only node that talks to the language model. It asks the core's reasoners about the
PDDL the caller sends (the task manager's current, possibly augmented, domain and
state), so its answers always refer to the objects that exist now. `method` names the
situation method whose reasoners answer (`cowp_ros.methods.registry`: `grounded` by
default, `cowp` for the paper's Prompts 1-3, or one a user registers); the task
manager must run the same method, and reads this node's `method` and `model` parameters
to check it. When no server is configured it starts the embedded local model for its
lifetime.

Every question and answer goes back in the response, for the task manager's report.
Any ROS peer may call it: a request past a bound (candidates, steps, names, text, or
`max_questions_per_request` questions) or holding a name that is not a PDDL name is
refused with a message (`ros/request_limits.py`). Its two services take turns at the
model (one model, one question at a time, `llm.turns`): a situation's decision or a
stand-in's question goes first, and the questions a new plan's objects will need, asked
ahead, take the model one question at a time between decisions, so that a situation
that comes while they are being asked waits for one question at most, not for all of
them (`decisions_first`). At most `MAX_REQUESTS` requests are taken at once, past that a
request is refused as busy; the node's parameter services answer meanwhile, so a peer
that reads `method` or `model` (the task manager before each task, a person with `ros2
param get`) is not kept waiting while the model thinks.
A caller that gives up on a request (the task manager, when its run is cancelled)
publishes the request's `request_id` on `/cowp/commonsense_cancel`: the request ends
before its next question (`RequestCancelledError`), so the model is free at once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import traceback
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from cowp_interfaces.srv import AcquireKnowledge, CheckPlan
from cowp_ros.cowp.answers import CandidateAssessment, MonitorVerdict, PlanCheck
from cowp_ros.cowp.ports import MonitorPreparation
from cowp_ros.errors import CowpError
from cowp_ros.limits import MAX_QUESTIONS_PER_REQUEST
from cowp_ros.llm.language_model import LanguageModel, Usage
from cowp_ros.llm.question_budget import QuestionBudget
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.llm.turns import Background, Decisive, DroppedError, ModelTurns
from cowp_ros.methods.paper.calibration.config import MonitorCalibration, calibration_for
from cowp_ros.methods.paper.method import CALIBRATION, THRESHOLD
from cowp_ros.methods.registry import ReasonerContext, Reasoners, graph_method
from cowp_ros.ros.clients.peer_method import METHOD_PARAMETER, MODEL_PARAMETER, method_param
from cowp_ros.ros.conversions import (
    put_assessment,
    put_plan_check,
    put_selection,
    put_usage,
    situation_from_check_request,
    steps_from_msgs,
    task_context_from_request,
)
from cowp_ros.ros.executors import NODE_THREADS, SteadyMultiThreadedExecutor
from cowp_ros.ros.names import ACQUIRE_SERVICE, CHECK_PLAN_SERVICE, COMMONSENSE_CANCEL_TOPIC
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import (
    Param,
    at_least,
    between,
    declare_parameters,
    positive,
)
from cowp_ros.ros.request_limits import check_acquire, check_acquire_fits, check_check_plan

MAX_REQUESTS = NODE_THREADS - 2
"""Requests taken at once (a plan's questions asked ahead and the decisions that come
meanwhile wait for their turns in executor threads); the rest of the threads stay for
the parameter services. The task manager sends at most two at a time."""

BUSY = "busy"
"""Begins the message of a request refused past `MAX_REQUESTS`."""

OFF = {"off", "false", "no"}
"""What `monitor_calibration` may say to turn the scored decision off."""


PARAMETERS = (
    method_param(
        "situation method (cowp_ros.methods.registry: grounded, cowp, or one registered "
        "through COWP_METHODS; the related methods, which ask their model inside the loop, "
        "are refused with that reason); the task manager adopts it"
    ),
    Param(
        "llm_url", "", "OpenAI-compatible base URL ('' = OPENAI_BASE_URL, else the embedded model)"
    ),
    Param("llm_model", "", "model name on that server ('' = OPENAI_MODEL or the server's)"),
    Param("llm_timeout_s", 120.0, "seconds one LLM request may take", positive),
    Param("embedded_model_path", "", "GGUF file for the embedded model ('' = the provisioned one)"),
    Param("answer_cache", True, "reuse cached answers (false: ask the model anew)"),
    Param(
        "warm_prefix",
        True,
        "have the server read the method's shared prompt prefix at start-up and after "
        "stand-in questions (false: a server that keeps no prompt, or is paid per call)",
    ),
    Param(
        "monitor_threshold",
        0.5,
        "P(yes) below which an unclear answer means 'no'",
        between(0.001, 0.999),
    ),
    Param(
        "monitor_calibration",
        "",
        "calibration YAML for the monitor's scored decision ('' = "
        "config/monitor_calibration.yaml, 'off' = the plain yes/no answer)",
    ),
    Param(
        "decisions_first",
        True,
        "a situation's decision goes before the questions asked ahead of it (false: every "
        "request in arrival order, those asked ahead all in one turn, as the node did "
        "before; for measuring the difference)",
    ),
    Param(
        "max_questions_per_request",
        MAX_QUESTIONS_PER_REQUEST,
        "questions to the model one request may cause; past it the request fails",
        at_least(1),
    ),
)


class CommonsenseNode(Node):
    def __init__(self, **options: Any) -> None:
        """`options` go to `Node` (a test makes one in its own context, with parameters)."""
        super().__init__("commonsense", **options)
        self._resources = contextlib.ExitStack()  # first: destroy_node() closes it
        self.params = declare_parameters(self, PARAMETERS)
        self.threshold = float(self.params["monitor_threshold"])
        self.method = graph_method(str(self.params[METHOD_PARAMETER]))
        self._calibration_file = str(self.params["monitor_calibration"])
        self.model = self._open_model()
        self.declare_parameter(
            MODEL_PARAMETER,
            self.model.name,
            ParameterDescriptor(
                description="the model that answers (set by the node)", read_only=True
            ),
        )
        self.turns = ModelTurns(ordered=bool(self.params["decisions_first"]))
        self._slots = threading.BoundedSemaphore(MAX_REQUESTS)
        self._cancel_lock = threading.Lock()
        self._stops: dict[str, threading.Event] = {}  # request_id -> set when cancelled
        self._cancelled: deque[str] = deque(maxlen=64)  # ids cancelled before they came
        self._local = threading.local()  # the stop event of the request this thread answers
        self.create_subscription(
            String,
            COMMONSENSE_CANCEL_TOPIC,
            self.on_cancel,
            QoSProfile(depth=64, reliability=ReliabilityPolicy.RELIABLE),
            callback_group=MutuallyExclusiveCallbackGroup(),
        )
        self._description = ""  # the last request's task, whose words the prefix ends with
        self._kept: dict[str, object] = {}  # the method's answers kept between requests
        group = ReentrantCallbackGroup()  # requests wait for their turns (`self.turns`)
        self.create_service(CheckPlan, CHECK_PLAN_SERVICE, self.on_check_plan, callback_group=group)
        self.create_service(
            AcquireKnowledge, ACQUIRE_SERVICE, self.on_acquire_knowledge, callback_group=group
        )
        self.calibration = self._load_calibration()
        self.get_logger().info(f"answering with {self.model.name}, method {self.method.name}")
        self._warm_soon()

    def _warm_soon(self) -> None:
        """Have the server read the method's shared prompt prefix now, in the background
        (at start-up, and after stand-in questions, whose prompts evict it), with the
        last request's task, so that the next situation costs only its own words; it is
        work asked ahead, so a decision that comes meanwhile goes first."""
        warm = self.method.warm
        if warm is None or not self.params["warm_prefix"]:
            return

        def read_prefix() -> None:
            try:
                warm(Background(self.model, self.turns), self._description)
            except Exception as err:  # the server gone, or the node shutting down
                self.get_logger().debug(f"reading the prompt prefix ahead failed: {err}")

        threading.Thread(target=read_prefix, name="warm_prefix", daemon=True).start()

    def _open_model(self) -> LanguageModel:
        from cowp_ros.bringup.node_secrets import (
            KEY_ENV,
            QUERY_ENV,
            USERINFO_ENV,
            split_key,
            split_query,
            with_query,
            with_userinfo,
        )
        from cowp_ros.llm.endpoint import open_model

        url = self.params["llm_url"]
        if split_key(url)[1] or split_query(url)[1]:
            # Too late to hide it (the parameter is readable now): stop, and say how.
            raise CowpError(
                "llm_url holds a user part or a query, either of which can be a key, and "
                "parameters are readable by any ROS peer: the node does not start with it",
                hint=f"give the URL without its user part or query and the key in {KEY_ENV} "
                "(cowp bringup and the launch files do that for an override)",
            )

        # The URL's user part and query (a key) came through the environment.
        url = with_userinfo(url, os.environ.get(USERINFO_ENV, ""))
        url = with_query(url, os.environ.get(QUERY_ENV, ""))
        settings = LLMSettings.resolve(
            base_url=url or None,
            model=self.params["llm_model"] or None,
            timeout_s=self.params["llm_timeout_s"],
        )
        if not self.params["answer_cache"]:
            settings = replace(settings, cache_path=None)
        model_path = self.params["embedded_model_path"] or None
        if not settings.configured:
            self.get_logger().info("no LLM server configured: starting the embedded model")
        model = self._resources.enter_context(open_model(settings, model_path=model_path))
        self.get_logger().info(f"LLM server: {model.base_url} ({model.name})")
        return model

    def _load_calibration(self) -> MonitorCalibration | None:
        """The monitor's calibrated decision for this model, read once at start-up."""
        if self._calibration_file.lower() in OFF:
            return None
        path = Path(self._calibration_file) if self._calibration_file else None
        calibration = calibration_for(self.model.name, path)
        if calibration is None:
            self.get_logger().info(
                f"no monitor calibration for {self.model.name}: plain yes/no decisions"
            )
        else:
            self.get_logger().info(
                f"monitor calibration: {calibration.variant.name}, blocked at score >= "
                f"{calibration.threshold:.3f}"
            )
        return calibration

    def destroy_node(self) -> None:
        self._resources.close()  # stops the embedded server if we started one
        super().destroy_node()

    # ------------------------------------------------------------------ requests
    def on_check_plan(
        self, request: CheckPlan.Request, response: CheckPlan.Response
    ) -> CheckPlan.Response:
        return self._answer("CheckPlan", self._check_plan, request, response)

    def on_acquire_knowledge(
        self, request: AcquireKnowledge.Request, response: AcquireKnowledge.Response
    ) -> AcquireKnowledge.Response:
        """The acquirer's answer; then the monitor's prefix is read again."""
        try:
            return self._answer("AcquireKnowledge", self._acquire, request, response)
        finally:
            self._warm_soon()

    def on_cancel(self, message: String) -> None:
        """A caller gave up on its request `message.data`: stop it before its next
        question (or, if it is still waiting for its turn, as soon as it starts)."""
        request_id = message.data[:64]
        if not request_id:
            return
        with self._cancel_lock:
            stop = self._stops.get(request_id)
            if stop is not None:
                stop.set()
            else:
                self._cancelled.append(request_id)

    def _start(self, request_id: str) -> threading.Event:
        """The stop event of a request now answered (set already if it was cancelled
        before it came); requests are answered side by side, each with its own."""
        stop = threading.Event()
        with self._cancel_lock:
            if request_id:
                self._stops[request_id] = stop
                if request_id in self._cancelled:
                    stop.set()
        return stop

    def _finish(self, request_id: str) -> None:
        with self._cancel_lock:
            self._stops.pop(request_id, None)
        self._local.stop = None

    def _answer(self, name: str, work: Any, request: Any, response: Any) -> Any:
        """Run one request; every failure becomes `success: false` with a message.

        A decision is under way for the whole request (no question asked ahead starts
        meanwhile) and takes the model for each of its questions; a plan's questions
        asked ahead take it one question at a time, once no decision is under way, and
        are dropped at their next question once a newer plan's replace them. Each
        request counts the usage of its own questions.
        """
        if not self._slots.acquire(blocking=False):
            response.success = False
            response.message = f"{BUSY}: {MAX_REQUESTS} requests are being answered"
            self.get_logger().warning(f"refused a {name} request: busy")
            return response
        request_id = request.request_id[:64]
        try:
            self._local.stop = self._start(request_id)
            if not self.turns.ordered:  # the order before: one request after the other
                with self.turns.decision():
                    before = replace(self.model.usage)
                    try:
                        work(request, response, self.model)
                    finally:
                        put_usage(response, self.model.name, before, self.model.usage)
            else:
                if _asks_ahead(request):
                    still_wanted = self.turns.replace_background()
                    turned: Background | Decisive = Background(
                        self.model, self.turns, still_wanted=still_wanted
                    )
                    under_way: Any = contextlib.nullcontext()
                else:
                    turned, under_way = Decisive(self.model, self.turns), self.turns.claim()
                try:
                    with under_way:
                        work(request, response, turned)
                finally:
                    put_usage(response, self.model.name, Usage(), turned.spent)
            response.success = True
        except DroppedError:
            response.success = False
            response.message = "dropped: a newer plan's questions replaced them"
            self.get_logger().info(f"{name}: the questions asked ahead were dropped")
        except CowpError as err:
            response.success, response.message = False, str(err)
            self.get_logger().warning(f"{name} failed: {err}")
        except Exception as err:  # a bug: answer with it rather than kill the service
            response.success = False
            response.message = f"internal error {type(err).__name__}: {err}"
            self.get_logger().error(f"{name} failed:\n{traceback.format_exc()}")
        finally:
            self._finish(request_id)
            self._slots.release()
        return response

    def _budgeted(self, model: LanguageModel) -> LanguageModel:
        """`model`, for one request: at most `max_questions_per_request` questions, and
        none once the request is cancelled."""
        stop = getattr(self._local, "stop", None)
        return QuestionBudget(model, self.params["max_questions_per_request"], stop)

    def _reasoners(self, model: LanguageModel, context: Any) -> Reasoners:
        """The method's reasoners for one request, over the request's task."""
        make = self.method.reasoners
        if make is None:  # `graph_method` refused such a method at start-up
            raise CowpError(f"the {self.method.name} method has no reasoners to answer with")
        return make(
            model,
            ReasonerContext(
                context.task,
                context.description,
                context.phrases,
                self.model.name,
                options={THRESHOLD: self.threshold, CALIBRATION: self.calibration},
                kept=self._kept,
            ),
        )

    def _check_plan(
        self, request: CheckPlan.Request, response: CheckPlan.Response, model: LanguageModel
    ) -> None:
        """The method's decision about the steps, with the situation as a fact when it
        blocks one (with no steps: only the fact). With steps and no situation, a new
        plan: a method that can asks ahead what its objects will need
        (`MonitorPreparation`), and keeps the answers for the situations to come."""
        check_check_plan(request)
        context = task_context_from_request(request)
        self._description = context.description
        steps = steps_from_msgs(request.steps)
        situation = situation_from_check_request(request)
        reasoners = self._reasoners(self._budgeted(model), context)
        if steps and not situation.text:
            asked: tuple[MonitorVerdict, ...] = ()
            if isinstance(reasoners.monitor, MonitorPreparation):
                asked = reasoners.monitor.prepare(steps, context.task)
            put_plan_check(response, PlanCheck(asked), steps)
            return
        focus = list(request.focus_objects)
        check = PlanCheck()
        if steps:
            check = reasoners.monitor.check(steps, situation, context.task, focus)
        if check.fact is None and (check.blocked is not None or not steps):
            blocked_args = list(check.blocked.args) if check.blocked is not None else []
            about = [*blocked_args, *focus] or [arg for step in steps for arg in step.args]
            check = replace(check, fact=reasoners.facts.generate(situation, context.task, about))
        put_plan_check(response, check, steps)

    def _acquire(
        self,
        request: AcquireKnowledge.Request,
        response: AcquireKnowledge.Response,
        model: LanguageModel,
    ) -> None:
        check_acquire(request)
        if len(request.candidate_types) != len(request.candidate_examples):
            raise CowpError("candidate_types and candidate_examples must have the same length")
        context = task_context_from_request(request)
        check_acquire_fits(request, context.task)
        self._description = context.description
        acquirer = self._reasoners(self._budgeted(model), context).acquirer
        pairs = list(zip(request.candidate_types, request.candidate_examples, strict=True))
        if request.select_only:
            accepted = [CandidateAssessment(kind, example) for kind, example in pairs]
        else:
            accepted = []
            for kind, example in pairs:
                assessment = acquirer.assess(
                    context.task,
                    request.role_type,
                    list(request.actions),
                    kind,
                    example,
                    "" if request.without_role_question else context.description,
                )
                put_assessment(response, assessment)
                if assessment.accepted:
                    accepted.append(assessment)
        response.accepted = [a.candidate_type for a in accepted]
        response.confidence = [float(a.confidence) for a in accepted]
        if not accepted:
            return
        selection = acquirer.select(
            accepted, request.role_type, context.description, request.situation
        )
        put_selection(response, selection)


def _asks_ahead(request: Any) -> bool:
    """A new plan sent with no situation: its questions are asked ahead of any."""
    return (
        isinstance(request, CheckPlan.Request)
        and bool(request.steps)
        and not situation_from_check_request(request).text
    )


def main(args: list[str] | None = None) -> None:
    run_node("commonsense", CommonsenseNode, SteadyMultiThreadedExecutor, args=args)


if __name__ == "__main__":
    main()
