"""A camera's view as a look needs it: one message taken after the arm came to rest,
with the camera's intrinsics.

A look (the depth locator's, the detections locator's) asks for the first message of
its topic that arrived after the request, and the latest sensor_msgs/CameraInfo beside
it (image_transport's convention: `camera_info` next to the image, in the same optical
frame). Both locators wait for the same pair the same way; they differ in what the
message is (a depth image, a DetectionArray) and in the geometry they apply to it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo

SETTLE_S = 0.15
"""A view must arrive this long after the request, so that the arm had stopped when it
was taken (the driver's exposure, the transport and any detector in between)."""


class CameraView:
    """The latest message of one camera topic (with when it came) and its CameraInfo."""

    def __init__(
        self,
        node: Node,
        message_type: Any,
        topic: str,
        qos: QoSProfile | int,
        info_topic: str,
        callback_group: CallbackGroup | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._message: tuple[Any, float] | None = None
        self._info: Any = None
        self.subscriptions = [
            node.create_subscription(
                message_type, topic, self._on_message, qos, callback_group=callback_group
            ),
            node.create_subscription(
                CameraInfo,
                info_topic,
                self._on_info,
                qos_profile_sensor_data,
                callback_group=callback_group,
            ),
        ]

    def _on_message(self, msg: Any) -> None:
        with self._lock:
            self._message = (msg, time.monotonic())

    def _on_info(self, msg: Any) -> None:
        with self._lock:
            self._info = msg

    def after_rest(self, timeout_s: float, cancel: threading.Event) -> tuple[Any, Any] | None:
        """(message, CameraInfo) for the first message that arrived `SETTLE_S` after
        now, or None at the deadline or on cancel."""
        since = time.monotonic() + SETTLE_S
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and not cancel.is_set():
            with self._lock:
                message, info = self._message, self._info
            if message is not None and info is not None and message[1] >= since:
                return message[0], info
            cancel.wait(0.02)
        return None
