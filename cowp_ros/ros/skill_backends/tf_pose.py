"""Where the base and the objects are, read from TF as a robot's own tools read it.

tf2_ros is not installable everywhere this code runs, so this listens to /tf and
/tf_static (tf2_msgs/TFMessage) itself and chains the transforms from the map frame to
any frame below it: the base (map -> odom -> base_link on a Nav2 robot) and objects
whose frames a pose estimator (or the physics world) publishes. Only what the executor
needs: poses in the map, and how old that knowledge is.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from cowp_ros.skills.interfaces import ObjectPose, Pose2D

# A chain longer than this is a loop or a mistake in the tree.
MAX_CHAIN = 16
# An object frame older than this is not trusted for a grasp (the object may have moved).
OBJECT_FRESH_S = 2.0


def _matrix(transform: Any) -> np.ndarray:
    t, q = transform.translation, transform.rotation
    w, x, y, z = q.w, q.x, q.y, q.z
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), t.x],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), t.y],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), t.z],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def _yaw(matrix: np.ndarray) -> float:
    return math.atan2(matrix[1, 0], matrix[0, 0])


class TfTree:
    """Latest transform to each child frame from its parent; lookups chain them to
    `frame_id` (the map)."""

    def __init__(self, node: Node, frame_id: str, callback_group: CallbackGroup | None) -> None:
        from tf2_msgs.msg import TFMessage

        self.frame_id = frame_id
        self._lock = threading.Lock()
        self._parents: dict[str, tuple[str, np.ndarray, float]] = {}
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
                    _matrix(t.transform),
                    now,
                )

    def lookup(self, frame: str) -> tuple[np.ndarray, float] | None:
        """`frame` in `frame_id` (4x4) and when the oldest link of the chain was heard
        (monotonic seconds), or None while the chain is incomplete."""
        with self._lock:
            transform, heard = np.eye(4), math.inf
            for _ in range(MAX_CHAIN):
                if frame == self.frame_id:
                    return transform, heard
                link = self._parents.get(frame)
                if link is None:
                    return None
                parent, matrix, when = link
                transform = matrix @ transform
                heard = min(heard, when)
                frame = parent
        return None

    def children(self, frame: str) -> list[str]:
        """The frames whose parent is `frame`."""
        with self._lock:
            return [child for child, (parent, _, _) in self._parents.items() if parent == frame]

    def ancestors(self, frame: str) -> list[str]:
        """`frame`'s parent, its parent's, and so on up the tree."""
        found: list[str] = []
        with self._lock:
            for _ in range(MAX_CHAIN):
                link = self._parents.get(frame)
                if link is None:
                    break
                frame = link[0]
                found.append(frame)
        return found

    def planar(self, frame: str) -> tuple[Pose2D, float] | None:
        found = self.lookup(frame)
        if found is None:
            return None
        matrix, heard = found
        return Pose2D(float(matrix[0, 3]), float(matrix[1, 3]), _yaw(matrix)), heard

    def wait_planar(
        self, frame: str, timeout_s: float, cancel: threading.Event, fresher_than: float
    ) -> Pose2D | None:
        """`frame`'s planar pose heard after `fresher_than` (monotonic), within `timeout_s`."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and not cancel.is_set():
            found = self.planar(frame)
            if found is not None and found[1] >= fresher_than:
                return found[0]
            time.sleep(0.02)
        return None


class TfPoses:
    """The skill layer's `PoseSource` on TF: the base's pose, and objects' frames named
    as the plan names the objects (cup_1)."""

    def __init__(self, tree: TfTree, base_frame: str) -> None:
        self.tree = tree
        self.base_frame = base_frame
        self.description = f"TF ({tree.frame_id} -> {base_frame}, object frames)"

    def base_pose(self) -> Pose2D | None:
        found = self.tree.wait_planar(
            self.base_frame, 1.0, threading.Event(), time.monotonic() - 0.5
        )
        return found

    def object_pose(self, name: str) -> ObjectPose | None:
        found = self.tree.lookup(name)
        if found is None or time.monotonic() - found[1] > OBJECT_FRESH_S:
            return None
        matrix, _ = found
        tilt = math.acos(max(-1.0, min(1.0, float(matrix[2, 2]))))
        return ObjectPose(
            float(matrix[0, 3]), float(matrix[1, 3]), float(matrix[2, 3]), _yaw(matrix), tilt
        )

    def known_objects(self) -> dict[str, ObjectPose]:
        """The fresh frames a pose estimator publishes in the map frame (its direct
        children), less the base's own chain (map -> odom)."""
        robot = set(self.tree.ancestors(self.base_frame))
        found: dict[str, ObjectPose] = {}
        for child in self.tree.children(self.tree.frame_id):
            if child in robot or child == self.base_frame:
                continue
            pose = self.object_pose(child)
            if pose is not None:
                found[child] = pose
        return found
