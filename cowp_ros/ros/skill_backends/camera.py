"""Find skills' optional check: wait for the detector to report the object's class.

Only used when the executor's verify_detections parameter is true: with a weak
detector (FACTS.md: YOLOv3-tiny) a find step that insists on a detection fails more
often than the robot does, so by default a find step goes to the place and looks.

With `frames` above one (the executor's detect_frames), the step waits until the
detector has reported the object in that many frames: as many as the detector needs to
report a situation about it (situation_detector's min_frames), and one more, so that
what it saw there is said before the step ends, however slowly the detector keeps up.
"""

from __future__ import annotations

import threading
import time

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from cowp_interfaces.msg import DetectionArray
from cowp_ros.ros.skill_backends.common import Signal, Timeouts, WaitEnd, wait_until
from cowp_ros.skills.interfaces import MotionResult


class DetectionCamera:
    """Watches cowp_interfaces/DetectionArray on the detections topic."""

    def __init__(
        self,
        node: Node,
        topic: str,
        timeouts: Timeouts,
        callback_group: CallbackGroup | None = None,
        *,
        min_confidence: float = 0.25,
        frames: int = 1,
    ) -> None:
        self.topic = topic
        self.timeouts = timeouts
        self.min_confidence = min_confidence
        self.frames = max(1, frames)
        self.description = f"detections on {topic}"
        self.signal = Signal()
        self._lock = threading.Lock()
        self._seen: list[tuple[float, frozenset[str]]] = []
        self.subscription = node.create_subscription(
            DetectionArray, topic, self._on_message, 10, callback_group=callback_group
        )

    def _on_message(self, msg: DetectionArray) -> None:
        classes = frozenset(
            d.class_name.lower() for d in msg.detections if d.confidence >= self.min_confidence
        )
        with self._lock:
            self._seen = [*self._seen[-50:], (time.monotonic(), classes)]
        self.signal.notify()

    def _seen_since(self, since: float, class_name: str) -> bool:
        """The detector reported `class_name` in `frames` frames since `since`."""
        with self._lock:
            seen = sum(1 for t, c in self._seen if t >= since and class_name in c)
        return seen >= self.frames

    def find(self, class_name: str, cancel: threading.Event) -> MotionResult:
        wanted = class_name.lower()
        start = time.monotonic()
        end = wait_until(
            lambda: self._seen_since(start, wanted),
            cancel=cancel,
            deadline=start + self.timeouts.detect_s,
            signal=self.signal,
            silence_s=self.timeouts.topic_s,
        )
        if end is WaitEnd.DONE:
            frames = f" in {self.frames} frames" if self.frames > 1 else ""
            return MotionResult.success(f"the detector sees a {wanted}{frames}")
        if end is WaitEnd.CANCELED:
            return MotionResult.canceled(f"canceled while looking for a {wanted}")
        if end is WaitEnd.SILENT:
            return MotionResult.failure(
                f"no cowp_interfaces/DetectionArray on {self.topic} for "
                f"{self.timeouts.topic_s:g} s (is situation_detector running?)"
            )
        frames = f" in {self.frames} frames" if self.frames > 1 else ""
        return MotionResult.failure(
            f"the detector did not report a {wanted}{frames} on {self.topic} within "
            f"{self.timeouts.detect_s:g} s"
        )
