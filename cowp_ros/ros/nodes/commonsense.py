"""commonsense: the LLM Plan Monitor (`CheckPlan`) and Knowledge Acquirer (`AcquireKnowledge`).

The only node that talks to the language model. It asks the core's `PlanMonitor`,
`PredicateGenerator` and `KnowledgeAcquirer` about the PDDL the caller sends (the task
manager's current, possibly augmented, domain and state), so its answers always refer
to the objects that exist now. When no server is configured it starts the embedded
local model for its lifetime.

Every question and answer goes back in the response, for the task manager's report.
"""

from __future__ import annotations

import contextlib
import math
import threading
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node

from cowp_interfaces.srv import AcquireKnowledge, CheckPlan
from cowp_ros.cowp.acquirer import CandidateAssessment, KnowledgeAcquirer
from cowp_ros.cowp.calibration.config import MonitorCalibration, calibration_for
from cowp_ros.cowp.monitor import PlanMonitor
from cowp_ros.cowp.predicates import PredicateGenerator
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel, YesNo
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.pddl import PlanningTask
from cowp_ros.ros.conversions import steps_from_msgs
from cowp_ros.ros.node_main import run_node
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases


@dataclass(frozen=True)
class TaskContext:
    """What one request is about: the registered task and its current PDDL."""

    spec: TaskSpec
    task: PlanningTask
    phrases: ActionPhrases


def p_yes_field(answer: YesNo) -> float:
    return -1.0 if answer.p_yes is None else float(answer.p_yes)


class CommonsenseNode(Node):
    def __init__(self) -> None:
        super().__init__("commonsense")
        describe = {
            "llm_url": "OpenAI-compatible base URL ('' = OPENAI_BASE_URL, else the embedded model)",
            "llm_model": "model name on that server ('' = OPENAI_MODEL or the server's)",
            "llm_timeout_s": "seconds one LLM request may take",
            "embedded_model_path": "GGUF file for the embedded model ('' = the provisioned one)",
        }
        self.declare_parameter("llm_url", "", ParameterDescriptor(description=describe["llm_url"]))
        self.declare_parameter(
            "llm_model", "", ParameterDescriptor(description=describe["llm_model"])
        )
        self.declare_parameter(
            "llm_timeout_s", 120.0, ParameterDescriptor(description=describe["llm_timeout_s"])
        )
        self.declare_parameter(
            "embedded_model_path",
            "",
            ParameterDescriptor(description=describe["embedded_model_path"]),
        )
        self.declare_parameter(
            "answer_cache",
            True,
            ParameterDescriptor(description="reuse cached answers (false: ask the model anew)"),
        )
        self.declare_parameter(
            "monitor_threshold",
            0.5,
            ParameterDescriptor(description="P(yes) below which an unclear answer means 'no'"),
        )
        self.threshold = float(self.get_parameter("monitor_threshold").value)
        if not 0.0 < self.threshold < 1.0:
            raise CowpError(f"parameter monitor_threshold must be in (0, 1), not {self.threshold}")
        self.declare_parameter(
            "monitor_calibration",
            "",
            ParameterDescriptor(
                description="calibration YAML for the monitor's scored decision ('' = "
                "config/monitor_calibration.yaml, 'off' = the plain yes/no answer)"
            ),
        )
        self._calibration_file = str(self.get_parameter("monitor_calibration").value)

        self._resources = contextlib.ExitStack()
        self.model = self._open_model()
        self._lock = threading.Lock()
        group = MutuallyExclusiveCallbackGroup()
        self.create_service(CheckPlan, "/cowp/check_plan", self.on_check_plan, callback_group=group)
        self.create_service(
            AcquireKnowledge,
            "/cowp/acquire_knowledge",
            self.on_acquire_knowledge,
            callback_group=group,
        )
        self.calibration = self._load_calibration()
        self.get_logger().info(f"answering with {self.model.name}")

    def _open_model(self) -> LanguageModel:
        from cowp_ros.llm.client import OpenAICompatibleModel
        from cowp_ros.llm.endpoint import llm_endpoint

        settings = LLMSettings.resolve(
            base_url=self.get_parameter("llm_url").value or None,
            model=self.get_parameter("llm_model").value or None,
            timeout_s=float(self.get_parameter("llm_timeout_s").value),
        )
        if not self.get_parameter("answer_cache").value:
            settings = replace(settings, cache_path=None)
        model_path = self.get_parameter("embedded_model_path").value or None
        if not settings.configured:
            self.get_logger().info("no LLM server configured: starting the embedded model")
        resolved = self._resources.enter_context(llm_endpoint(settings, model_path=model_path))
        self.get_logger().info(f"LLM server: {resolved.base_url} ({resolved.model})")
        return OpenAICompatibleModel(resolved)

    def _load_calibration(self) -> MonitorCalibration | None:
        """The monitor's calibrated decision for this model, read once at start-up."""
        if self._calibration_file == "off":
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
    def _task_context(self, task_name: str, domain: str, problem: str) -> TaskContext:
        spec = get_task(task_name)
        task = PlanningTask.from_text(domain, problem, "request") if domain else spec.load()
        return TaskContext(spec, task, ActionPhrases(spec.phrases))

    def on_check_plan(self, request: CheckPlan.Request, response: CheckPlan.Response):
        return self._answer("CheckPlan", self._check_plan, request, response)

    def on_acquire_knowledge(
        self, request: AcquireKnowledge.Request, response: AcquireKnowledge.Response
    ):
        return self._answer("AcquireKnowledge", self._acquire, request, response)

    def _answer(self, name: str, work, request, response):
        """Run one request; every failure becomes `success: false` with a message.

        One at a time: the model server answers sequentially anyway, and the answer
        cache and usage counters stay consistent.
        """
        try:
            with self._lock:
                work(request, response)
            response.success = True
        except CowpError as err:
            response.success, response.message = False, str(err)
            self.get_logger().warning(f"{name} failed: {err}")
        except Exception as err:  # a bug: answer with it rather than kill the service
            response.success = False
            response.message = f"internal error {type(err).__name__}: {err}"
            self.get_logger().error(f"{name} failed:\n{traceback.format_exc()}")
        return response

    def _check_plan(self, request: CheckPlan.Request, response: CheckPlan.Response) -> None:
        context = self._task_context(request.task, request.domain_pddl, request.problem_pddl)
        steps = steps_from_msgs(request.steps)
        monitor = PlanMonitor(
            self.model, context.phrases, threshold=self.threshold, calibration=self.calibration
        )
        response.feasible, response.failing_step = True, -1
        response.threshold = math.nan
        for index, step in enumerate(steps):
            verdict = monitor.check(step, request.situation, context.task)
            response.questions.append(verdict.question)
            response.answers.append(verdict.answer.text)
            response.p_yes.append(p_yes_field(verdict.answer))
            response.unclear.append(verdict.unclear)
            response.cached.append(verdict.answer.cached)
            response.scores.append(math.nan if verdict.score is None else verdict.score)
            if verdict.threshold is not None:
                response.threshold, response.variant = verdict.threshold, verdict.variant or ""
            if not verdict.suitable:
                response.feasible, response.failing_step = False, index
                break
        if response.feasible and steps:
            return
        focus = list(request.focus_objects) or [
            arg for step in steps[max(response.failing_step, 0) :] for arg in step.args
        ]
        generator = PredicateGenerator(self.model, reserved=frozenset(context.task.predicates))
        fact = generator.generate(request.situation, context.task, focus)
        response.predicate = str(fact.atom)
        response.predicate_subject = fact.subject or ""
        response.predicate_source = fact.source
        response.predicate_note = fact.note

    def _acquire(self, request: AcquireKnowledge.Request, response) -> None:
        if len(request.candidate_types) != len(request.candidate_examples):
            raise CowpError("candidate_types and candidate_examples must have the same length")
        context = self._task_context(request.task, request.domain_pddl, request.problem_pddl)
        acquirer = KnowledgeAcquirer(self.model, context.phrases, threshold=self.threshold)
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
                    context.spec.description,
                )
                for q in assessment.questions:
                    response.question_candidates.append(kind)
                    response.question_actions.append(q.action)
                    response.questions.append(q.question)
                    response.answers.append(q.answer.text)
                    response.p_yes.append(p_yes_field(q.answer))
                    response.suitable.append(q.suitable)
                    response.unclear.append(q.unclear)
                    response.cached.append(q.answer.cached)
                if assessment.accepted:
                    accepted.append(assessment)
        response.accepted = [a.candidate_type for a in accepted]
        response.confidence = [float(a.confidence) for a in accepted]
        if not accepted:
            return
        selection = acquirer.select(
            accepted, request.role_type, context.spec.description, request.situation
        )
        response.chosen, response.how = selection.chosen, selection.how
        response.selection_question = selection.question or ""
        response.selection_answer = selection.answer.text if selection.answer else ""


def main(args: list[str] | None = None) -> None:
    run_node("commonsense", CommonsenseNode, args=args)


if __name__ == "__main__":
    main()
