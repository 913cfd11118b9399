"""The verbs of `cowp task situation` and `cowp task cancel`: the situation reaches a
subscriber in another program before the verb returns (it waits for the subscriber's
acknowledgement, not for a guessed moment), and fails with the fix when nobody
listens; the cancel reaches the running task past a request lost to discovery, and
says so when nothing runs."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from rclpy.action import CancelResponse
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy

from cowp_interfaces.action import RunTask
from cowp_interfaces.msg import Situation
from cowp_ros.cowp.driver import Outcome
from cowp_ros.errors import CowpError
from cowp_ros.ros.clients.graph_verbs import cancel_running_task, publish_situation
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.ros.matching import compatible_subscriptions, everyone_matched
from cowp_ros.ros.names import RUN_TASK_ACTION, SITUATIONS_TOPIC
from cowp_ros.ros.result_delivery import ResultAwareActionServer

pytestmark = pytest.mark.ros


def test_the_situation_has_arrived_when_the_verb_returns(lone_node) -> None:
    listener = lone_node("situation_listener")
    heard: list[Situation] = []
    listener.create_subscription(Situation, SITUATIONS_TOPIC, heard.append, 10)
    publish_situation(
        "the cup is dirty", about="cup_1", source="person", confidence=0.9, wait_s=30.0
    )
    # The verb's node is gone; the message waits in the listener's reader.
    executor = SingleThreadedExecutor(context=listener.context)
    executor.add_node(listener)
    deadline = time.monotonic() + 10.0
    while not heard and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    assert [(m.text, m.object, m.source) for m in heard] == [
        ("the cup is dirty", "cup_1", "person")
    ]


def test_every_listener_the_graph_shows_hears_it_a_recorder_too(lone_node) -> None:
    """The task manager and a recorder, each in a program of its own: the verb waits
    until it matched both, not only the first it found."""
    heard: dict[str, list[Situation]] = {"task_manager": [], "recorder": []}
    listeners = []
    for name, inbox in heard.items():
        listener = lone_node(name)
        listener.create_subscription(Situation, SITUATIONS_TOPIC, inbox.append, 10)
        listeners.append(listener)
    # The verb's own node may not have discovered both listeners when it looks (DDS
    # discovery takes its time); what it must never do is stop at the first it matched.
    for _ in range(10):
        matched, seen = publish_situation(
            "the cup is dirty", about="cup_1", source="person", confidence=0.9, wait_s=30.0
        )
        assert matched == seen  # every listener it saw, it waited for
        if seen == 2:
            break
    assert (matched, seen) == (2, 2)
    for listener in listeners:
        executor = SingleThreadedExecutor(context=listener.context)
        executor.add_node(listener)
        deadline = time.monotonic() + 10.0
        while not heard[listener.get_name()] and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        executor.shutdown()
    assert {name: {m.text for m in inbox} for name, inbox in heard.items()} == {
        "task_manager": {"the cup is dirty"},
        "recorder": {"the cup is dirty"},
    }


class FakeGraph:
    """What a publisher's node shows of the graph: the subscriptions on the topic."""

    def __init__(self, profiles: list[Any]) -> None:
        self.profiles = profiles

    def get_subscriptions_info_by_topic(self, _topic: str) -> list[Any]:
        return [SimpleNamespace(qos_profile=profile) for profile in self.profiles]


def test_a_publisher_waits_for_each_compatible_subscriber_it_sees() -> None:
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    best_effort = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    publisher = SimpleNamespace(qos_profile=best_effort, get_subscription_count=lambda: 1)
    # Two readers seen, one matched so far: not yet.
    graph = FakeGraph([best_effort, best_effort])
    assert not everyone_matched(graph, "/t", publisher)  # type: ignore[arg-type]
    # A reliable reader can never match a best-effort publisher: not waited for.
    graph = FakeGraph([best_effort, reliable])
    assert compatible_subscriptions(graph, "/t", publisher) == 1  # type: ignore[arg-type]
    assert everyone_matched(graph, "/t", publisher)  # type: ignore[arg-type]
    # Nobody matched is never "everyone", even with nobody seen yet.
    lonely = SimpleNamespace(qos_profile=best_effort, get_subscription_count=lambda: 0)
    assert not everyone_matched(FakeGraph([]), "/t", lonely)  # type: ignore[arg-type]


def test_nobody_listening_is_an_error_that_says_so() -> None:
    with pytest.raises(CowpError, match="nobody listens on /cowp/situations after 1 s"):
        publish_situation("the cup is dirty", about="", source="person", confidence=1.0, wait_s=1.0)


class HardOfHearing(ResultAwareActionServer):
    """The task manager's kind of server, deaf to the first cancel request it gets (what
    discovery under load does to a new client's request or answer); counts them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.cancel_requests = 0
        super().__init__(*args, **kwargs)

    async def _execute_cancel_request(self, request_header_and_message: Any) -> None:
        self.cancel_requests += 1
        if self.cancel_requests == 1:
            return  # lost on the way: no answer will ever come for it
        await super()._execute_cancel_request(request_header_and_message)


def run_until_canceled(goal_handle: Any) -> Any:
    while not goal_handle.is_cancel_requested:
        time.sleep(0.05)
    goal_handle.canceled()
    return RunTask.Result(success=False, outcome="canceled", explanation="canceled")


def test_cancel_reaches_the_running_task_past_a_lost_request(run_task_server) -> None:
    server = run_task_server(
        HardOfHearing,
        RUN_TASK_ACTION,
        run_until_canceled,
        cancel_callback=lambda _goal: CancelResponse.ACCEPT,
    )
    client = TaskClient(node_name="cancel_verb_client")
    try:
        client.wait_until_ready(30)
        client.run_task("serve_water")
        canceling = cancel_running_task(30.0)
        result = client.get_result(timeout_s=30)
    finally:
        client.close()
    assert canceling == 1
    assert server.cancel_requests == 3  # the lost handshake, the answered one, the cancel
    assert result.delivered and result.outcome is Outcome.CANCELED


def test_cancel_with_nothing_running_cancels_nothing(run_task_server) -> None:
    run_task_server(HardOfHearing, RUN_TASK_ACTION, run_until_canceled)
    assert cancel_running_task(30.0) == 0
