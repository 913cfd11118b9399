"""The steady MultiThreadedExecutor hands a callback over once and then sleeps, where
rclpy's own loops on a callback that waits for a free worker (ros/executors.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import Executor, MultiThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Int32

from cowp_ros.ros.executors import SteadyMultiThreadedExecutor

pytestmark = [
    pytest.mark.ros,
    # one worker on purpose: the case where a ready callback has to wait for it
    pytest.mark.filterwarnings("ignore:MultiThreadedExecutor is used with a single thread"),
]


@pytest.fixture
def context() -> Iterator[rclpy.Context]:
    made = rclpy.Context()
    rclpy.init(context=made)
    yield made
    rclpy.try_shutdown(context=made)


def waits_while_the_only_worker_is_busy(context: rclpy.Context, kind: type[Executor]) -> int:
    """How often the executor looks for work while its one worker is held by a callback
    and a second message waits for that worker."""
    node = Node(f"steady_{time.monotonic_ns()}", context=context)
    group = ReentrantCallbackGroup()
    release, holding, heard = threading.Event(), threading.Event(), []

    def hold(msg: Int32) -> None:
        heard.append(msg.data)
        holding.set()
        release.wait(5.0)

    topic = f"/steady_{time.monotonic_ns()}"
    node.create_subscription(Int32, topic, hold, 10, callback_group=group)
    publisher = node.create_publisher(Int32, topic, 10)
    executor = kind(num_threads=1, context=context)  # type: ignore[call-arg]
    executor.add_node(node)
    looks = [0]
    original = executor.wait_for_ready_callbacks

    def counted(*args, **kwargs):
        looks[0] += 1
        return original(*args, **kwargs)

    executor.wait_for_ready_callbacks = counted  # type: ignore[method-assign]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not holding.is_set() and time.monotonic() < deadline:
            publisher.publish(Int32(data=1))
            time.sleep(0.05)
        assert holding.is_set(), "the subscription never heard the publisher"
        publisher.publish(Int32(data=2))  # ready, but the only worker is held
        time.sleep(0.3)
        before = looks[0]
        time.sleep(0.5)
        during = looks[0] - before
    finally:
        release.set()
        stop.set()
        thread.join(timeout=5)
        executor.shutdown()
        node.destroy_node()
    return during


def test_the_steady_executor_sleeps_while_a_callback_waits_for_a_worker(context) -> None:
    # A blocked hand-over re-checks shutdown every 0.1 s; a timed-out wait every 0.05 s.
    assert waits_while_the_only_worker_is_busy(context, SteadyMultiThreadedExecutor) <= 12


def test_rclpy_executor_loops_meanwhile_the_defect_the_steady_one_avoids(context) -> None:
    """Kilted's rclpy: if this starts failing, the upstream fix has arrived and
    ros/executors.py can go."""
    assert waits_while_the_only_worker_is_busy(context, MultiThreadedExecutor) > 100


def test_on_one_cpu_a_blocking_callback_still_hears_the_messages_it_waits_for(
    context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor nodes' goal callbacks block until a joint state (another callback)
    arrives. In a one-CPU container rclpy's default gives one worker, which the blocking
    callback holds forever; the executor nodes' thread count must not follow the CPUs."""
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    node = Node(f"one_cpu_{time.monotonic_ns()}", context=context)
    group = ReentrantCallbackGroup()
    started, state, done = threading.Event(), threading.Event(), threading.Event()
    topic = f"/one_cpu_{time.monotonic_ns()}"

    def goal(msg: Int32) -> None:  # like ExecuteSkill: waits for another callback
        started.set()
        if state.wait(10.0):
            done.set()

    node.create_subscription(Int32, f"{topic}/goal", goal, 10, callback_group=group)
    node.create_subscription(Int32, f"{topic}/state", lambda m: state.set(), 10,
                             callback_group=group)  # fmt: skip
    goals = node.create_publisher(Int32, f"{topic}/goal", 10)
    states = node.create_publisher(Int32, f"{topic}/state", 10)
    executor = SteadyMultiThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not started.is_set() and time.monotonic() < deadline:
            goals.publish(Int32(data=1))  # until discovery has matched
            time.sleep(0.05)
        assert started.is_set(), "the goal subscription never heard its publisher"
        deadline = time.monotonic() + 10
        while not done.is_set() and time.monotonic() < deadline:
            states.publish(Int32(data=1))
            time.sleep(0.05)
        assert done.is_set(), "the goal callback never heard the state: deadlocked"
    finally:
        state.set()
        executor.shutdown(timeout_sec=2.0)
        thread.join(timeout=5)
        node.destroy_node()
