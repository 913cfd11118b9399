"""The base's pose on the map, read from TF as a robot's own tools read it.

tf2_ros is not installable everywhere this code runs, so this listens to /tf and
/tf_static (tf2_msgs/TFMessage) itself and chains the planar transforms from the map
frame to the base frame (map -> odom -> base_link on a Nav2 robot). Only what the
executor needs: where the base is, in the plane, and how old that knowledge is.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from cowp_ros.skills.interfaces import Pose2D

# A chain longer than this is a loop or a mistake in the tree.
MAX_CHAIN = 16


def _planar(transform: Any) -> Pose2D:
    t, q = transform.translation, transform.rotation
    yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
    return Pose2D(float(t.x), float(t.y), yaw)


def compose(a: Pose2D, b: Pose2D) -> Pose2D:
    """Pose `b` (given in frame `a`) in `a`'s parent frame."""
    c, s = math.cos(a.yaw), math.sin(a.yaw)
    yaw = a.yaw + b.yaw
    return Pose2D(
        a.x + c * b.x - s * b.y, a.y + s * b.x + c * b.y, math.atan2(math.sin(yaw), math.cos(yaw))
    )


class TfPose:
    """Latest transforms by child frame; `pose()` chains them up to `frame_id`."""

    def __init__(
        self, node: Node, frame_id: str, child_frame: str, callback_group: CallbackGroup | None
    ) -> None:
        from tf2_msgs.msg import TFMessage

        self.frame_id = frame_id
        self.child_frame = child_frame
        self._lock = threading.Lock()
        self._parents: dict[str, tuple[str, Pose2D, float]] = {}
        static_qos = QoSProfile(
            depth=100,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
            reliability=ReliabilityPolicy.RELIABLE,
        )
        self.subscriptions = [
            node.create_subscription(
                TFMessage, "/tf", self._on_tf, 100, callback_group=callback_group
            ),
            node.create_subscription(
                TFMessage, "/tf_static", self._on_static, static_qos, callback_group=callback_group
            ),
        ]

    def _on_static(self, msg: Any) -> None:
        self._keep(msg, math.inf)  # a static transform never goes stale

    def _on_tf(self, msg: Any) -> None:
        # (one parameter: rclpy passes a second, the message info, to callbacks taking two)
        self._keep(msg, time.monotonic())

    def _keep(self, msg: Any, now: float) -> None:
        with self._lock:
            for t in msg.transforms:
                self._parents[t.child_frame_id.lstrip("/")] = (
                    t.header.frame_id.lstrip("/"),
                    _planar(t.transform),
                    now,
                )

    def pose(self) -> tuple[Pose2D, float] | None:
        """The child frame in `frame_id` and when the oldest link of the chain was heard
        (monotonic seconds), or None while the chain is incomplete."""
        with self._lock:
            frame, pose, heard = self.child_frame, Pose2D(0.0, 0.0, 0.0), math.inf
            for _ in range(MAX_CHAIN):
                if frame == self.frame_id:
                    return pose, heard
                link = self._parents.get(frame)
                if link is None:
                    return None
                parent, transform, when = link
                pose = compose(transform, pose)
                heard = min(heard, when)
                frame = parent
        return None

    def wait_pose(
        self, timeout_s: float, cancel: threading.Event, fresher_than: float
    ) -> Pose2D | None:
        """A pose heard after `fresher_than` (monotonic), within `timeout_s`."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and not cancel.is_set():
            found = self.pose()
            if found is not None and found[1] >= fresher_than:
                return found[0]
            time.sleep(0.02)
        return None
