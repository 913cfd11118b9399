"""A request its caller gave up on asks the model no more questions: after a cancel the
commonsense node went on asking all of the cancelled request's questions, holding the
model from the next request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rclpy.parameter import Parameter
from std_msgs.msg import String

from cowp_interfaces.srv import AcquireKnowledge
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer
from cowp_ros.ros.clients.commonsense_client import CommonsenseClient
from cowp_ros.tasks.phrases import ActionPhrases

pytestmark = pytest.mark.ros

KINDS = ["bowl", "mug", "glass", "bottle", "bucket"]
"""Five candidate kinds the scripted model accepts: about five questions each."""


@pytest.fixture
def context() -> Iterator[Any]:
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


def _request(request_id: str) -> AcquireKnowledge.Request:
    return AcquireKnowledge.Request(
        task="serve_water",
        role_type="cup",
        actions=["fill_water", "deliver_water"],
        candidate_types=KINDS,
        candidate_examples=[f"{kind}_1" for kind in KINDS],
        request_id=request_id,
    )


def test_a_cancelled_request_asks_no_more_questions(context: Any) -> None:

    sane = SensibleModel()
    node: list[Any] = []
    asked: list[str] = []
    armed: list[bool] = []

    def respond(request: Request) -> Reply | None:
        if request.is_chat:
            asked.append(request.path)
            if armed and len(asked) == 2:  # the caller gives up during its second question
                node[0].on_cancel(String(data="run-7"))
        return sane(request)

    with ScriptedLLMServer(respond) as server:
        built = _node(context, server.url)
        node.append(built)
        try:
            uncancelled = built.on_acquire_knowledge(_request("run-6"), AcquireKnowledge.Response())
            full = len(asked)
            asked.clear()
            armed.append(True)
            response = built.on_acquire_knowledge(_request("run-7"), AcquireKnowledge.Response())
            after = len(asked)
            armed.clear()
            asked.clear()
            built.on_cancel(String(data="run-9"))  # cancelled before its turn came
            early = built.on_acquire_knowledge(_request("run-9"), AcquireKnowledge.Response())
        finally:
            built.destroy_node()
    assert uncancelled.success and full >= 10, (full, uncancelled.message)
    assert not response.success and "cancelled by its caller after 2 questions" in response.message
    assert after == 2
    assert not early.success and "after 0 questions" in early.message and not asked


def _node(context: Any, url: str) -> Any:
    from cowp_ros.ros.nodes.commonsense import CommonsenseNode

    overrides = {
        "llm_url": url,
        "llm_model": "scripted",
        "answer_cache": False,
        "warm_prefix": False,
        "monitor_calibration": "off",
        "method": "cowp",
    }
    return CommonsenseNode(
        context=context, parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()]
    )


class _Published:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def publish(self, message: String) -> None:
        self.sent.append(message.data)


def test_a_run_that_ends_cancels_its_requests_still_in_flight(context: Any) -> None:
    node = rclpy.create_node("probe", context=context)
    published = _Published()
    try:
        client = CommonsenseClient(
            node,
            task_name="serve_water",
            description="serving water",
            phrases=ActionPhrases({}),
            cancel_publisher=published,
        )
        request = AcquireKnowledge.Request()
        request_id = client._new_id(request)
        answered = client._new_id(AcquireKnowledge.Request())
        client._answered(answered)
        client.close()
    finally:
        node.destroy_node()
    assert request.request_id == request_id and published.sent == [request_id]
