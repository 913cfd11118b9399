"""Replay a run's inputs step by step: each message when the live graph is at the step
it was recorded at (`cowp replay BAG --follow-steps`).

A replay at the recorded pace feeds a camera picture to the detector at the moment it
came in the recording, but the live robot takes its own time over each step, so the
picture of the cup with something in it may arrive while the live robot is already
walking to the faucet, and the detector (which judges a picture against the step being
executed) decides otherwise. The bag also holds the executor's step announcements
(`/cowp/current_step`), which cut the recording into segments: the messages recorded
while each step ran. Here each segment is published, at its recorded spacing, when the
live executor announces the same step; the messages from before the first step are
left out (the live run has not started then), and so is the rest of a segment once the
live run announces its next step (a picture of the cup must not reach the detector
while the live robot looks for the mug). Steps the live run does not take are skipped
over, so a run that decides otherwise says so in what it was not sent.

A camera keeps sending while the robot stays at a step: once a segment's pictures are
out and the live run is still at that step, its last picture is sent again at the
recorded frame spacing (as a still camera would), so a detector that dropped frames,
or a step that waits for the detector to have seen its object, is not left without
one. Only camera images are held so; a situation or a step is never sent twice.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_interfaces.msg import PlanStep
from cowp_ros.errors import CowpError
from cowp_ros.ros.bags import (
    BagRecord,
    ReplayReport,
    deserialize,
    message_class,
    read_bag,
    recorded_qos,
    replay_qos,
    typestore,
)
from cowp_ros.ros.matching import wait_for_every_subscriber
from cowp_ros.ros.names import CURRENT_STEP_TOPIC

STEP_TYPE = "cowp_interfaces/msg/PlanStep"
IMAGE_TYPE = "sensor_msgs/msg/Image"
HOLD_SPACING_S = 0.5
"""The spacing of a held picture when the segment has only one."""


def step_key(action: str, arguments: Sequence[str]) -> str:
    """`find_cup(cup_1)`: how a step is told apart."""
    return f"{action}({', '.join(arguments)})"


@dataclass
class Segment:
    """The messages recorded while one step ran."""

    step: str
    records: list[BagRecord] = field(default_factory=list)


def step_segments(path: Path, topics: Sequence[str] | None) -> list[Segment]:
    """The bag's messages on `topics` (None: all but the steps) cut at each recorded step
    announcement, in order; what came before the first step is left out."""
    store = typestore()
    segments: list[Segment] = []
    for record in read_bag(path):
        if record.topic == CURRENT_STEP_TOPIC and record.msgtype == STEP_TYPE:
            step = deserialize(record, store)
            segments.append(Segment(step_key(step.action, list(step.arguments))))
        elif segments and (topics is None or record.topic in topics):
            segments[-1].records.append(record)
    if not segments:
        raise CowpError(
            f"the bag at {path} has no {CURRENT_STEP_TOPIC}: nothing to follow",
            hint="record the current step with the run, or replay without --follow-steps",
        )
    return segments


class StepFollower:
    """Publishes each segment when the live executor announces its step."""

    def __init__(self, node: Any, path: Path, topics: Sequence[str] | None, rate: float) -> None:
        if rate <= 0:
            raise CowpError(f"replay rate must be positive, got {rate}")
        self.node = node
        self.rate = rate
        self.segments = step_segments(path, topics)
        offered = recorded_qos(path)
        self.publishers: dict[str, Any] = {}
        for segment in self.segments:
            for record in segment.records:
                if record.topic not in self.publishers:
                    self.publishers[record.topic] = node.create_publisher(
                        message_class(record.msgtype),
                        record.topic,
                        replay_qos(offered.get(record.topic, []), 10),
                    )
        self._announced: queue.Queue[str] = queue.Queue()
        self.steps = node.create_subscription(
            PlanStep,
            CURRENT_STEP_TOPIC,
            lambda m: self._announced.put(step_key(m.action, list(m.arguments))),
            10,
        )
        self.published = 0
        self.skipped: list[str] = []

    def follow(self, stop: threading.Event, say: Callable[[str], None], idle_s: float) -> None:
        """Until every segment went out, `stop`, or `idle_s` without a step that has one."""
        pending = list(self.segments)
        last_step_at = time.monotonic()
        while pending and not stop.is_set():
            try:
                announced = self._announced.get(timeout=0.1)
            except queue.Empty:
                if time.monotonic() - last_step_at > idle_s:
                    say(f"no recorded step announced for {idle_s:g} s: stopping")
                    break
                continue
            keys = [segment.step for segment in pending]
            if announced not in keys:
                continue  # a step the recording did not take (or one already replayed)
            last_step_at = time.monotonic()
            index = keys.index(announced)
            self.skipped += [segment.step for segment in pending[:index]]
            segment = pending[index]
            pending = pending[index + 1 :]
            say(f"step {announced}: {len(segment.records)} message(s)")
            self._publish(segment, stop, hold=bool(pending), hold_s=idle_s)
        self.skipped += [segment.step for segment in pending]

    def _publish(
        self, segment: Segment, stop: threading.Event, *, hold: bool, hold_s: float
    ) -> None:
        """The segment at its recorded spacing; then, with `hold` and while the live run
        stays at the step (at most `hold_s`), its last picture again and again."""
        if not segment.records:
            return
        start = time.monotonic()
        first = segment.records[0].timestamp_ns
        for record in segment.records:
            due = start + (record.timestamp_ns - first) / 1e9 / self.rate
            if stop.wait(max(0.0, due - time.monotonic())) or self._announced.qsize():
                return  # stopped, or the live run moved on: the rest belongs to no step
            self.publishers[record.topic].publish(record.rawdata)
            self.published += 1
        pictures = [r for r in segment.records if r.msgtype == IMAGE_TYPE]
        if not hold or not pictures:
            return
        spacing = HOLD_SPACING_S
        if len(pictures) > 1:
            spread = (pictures[-1].timestamp_ns - pictures[0].timestamp_ns) / 1e9
            spacing = max(0.05, spread / (len(pictures) - 1) / self.rate)
        last, until = pictures[-1], time.monotonic() + hold_s
        while time.monotonic() < until:
            if stop.wait(spacing) or self._announced.qsize():
                return
            self.publishers[last.topic].publish(last.rawdata)
            self.published += 1


def replay_following_steps(
    bag: Path,
    *,
    topics: Sequence[str] | None,
    rate: float,
    subscriber_timeout_s: float,
    idle_s: float,
    stop: threading.Event,
    say: Callable[[str], None],
) -> ReplayReport:
    """`cowp replay --follow-steps`: wait for the live graph's readers and its executor,
    then publish each recorded step's messages as the live run takes that step."""
    from rclpy.duration import Duration

    from cowp_ros.ros.own_node import OwnNode

    with OwnNode("cowp_step_replay") as own:
        follower = StepFollower(own.node, bag, topics, rate)
        own.spin_in_background()
        unheard = wait_for_every_subscriber(
            own.node, follower.publishers, subscriber_timeout_s, stop
        )
        deadline = time.monotonic() + subscriber_timeout_s
        while follower.steps.get_publisher_count() == 0 and time.monotonic() < deadline:
            if stop.wait(0.05):
                break
        if follower.steps.get_publisher_count() == 0:
            raise CowpError(
                f"no executor announces steps on {CURRENT_STEP_TOPIC} after "
                f"{subscriber_timeout_s:g} s",
                hint="start the graph first (cowp bringup --profile replay), same ROS_DOMAIN_ID",
            )
        say(f"following the steps on {CURRENT_STEP_TOPIC}: {len(follower.segments)} recorded")
        follower.follow(stop, say, idle_s)
        if follower.skipped:
            say(f"not taken by the live run: {', '.join(follower.skipped)}")
        ack_deadline = time.monotonic() + 10.0
        unacknowledged = tuple(
            topic
            for topic, publisher in follower.publishers.items()
            if topic not in unheard
            and not publisher.wait_for_all_acked(
                Duration(nanoseconds=int(max(0.0, ack_deadline - time.monotonic()) * 1e9))
            )
        )
        return ReplayReport(follower.published, tuple(unheard), unacknowledged)
