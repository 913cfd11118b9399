"""A scenario's situations, reported when the executor announces the step they belong to.

Shared by the world nodes (sim_world, physics_world): each follows /cowp/current_step,
queues the matching scenario events, and publishes each as a `Situation` a short time
later, on the topic a camera detector, a bag or a person would use.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.node import Node

from cowp_interfaces.msg import PlanStep, Situation
from cowp_ros.ros.names import SITUATIONS_TOPIC
from cowp_ros.sim.scenario import EventTrigger, Scenario


class ScenarioReporter:
    def __init__(
        self,
        node: Node,
        scenario: Scenario,
        *,
        delay_s: float,
        enabled: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock`: the seconds `delay_s` is counted in (the world's own time where it
        runs faster or slower than the wall clock)."""
        self.node = node
        self.clock = clock
        self.trigger = EventTrigger(scenario.events)
        self.delay_s = delay_s
        self.enabled = enabled
        self.pending: list[tuple[float, Situation]] = []
        self.publisher = node.create_publisher(Situation, SITUATIONS_TOPIC, 10)

    def on_step(self, step: PlanStep) -> None:
        if not self.enabled:
            return
        for event in self.trigger.on_step(step.action, list(step.arguments)):
            if event.seen_by:
                continue  # that node reports it, from what the camera shows
            situation = Situation(
                text=event.situation, object=event.about, source="sim", confidence=1.0
            )
            self.pending.append((self.clock() + self.delay_s, situation))

    def publish_due(self) -> None:
        now = self.clock()
        due = [s for t, s in self.pending if t <= now]
        self.pending = [(t, s) for t, s in self.pending if t > now]
        for situation in due:
            situation.header.stamp = self.node.get_clock().now().to_msg()
            self.publisher.publish(situation)
            self.node.get_logger().info(f"situation: {situation.text}")
