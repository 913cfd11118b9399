"""The wrist colour camera's detections as the skill layer's ObjectLocator: one fresh
cowp_interfaces/DetectionArray after the arm stopped above where an object should be,
its box lifted to the map through the camera's intrinsics, TF and the surface's height.

For a wrist camera without depth. The detector (situation_detector) publishes the boxes
of each image it ran on, stamped and framed as the image; the colour camera's driver
publishes its sensor_msgs/CameraInfo beside the image (image_transport's convention,
`camera_info` next to `image_raw`), in the same optical frame, which TF places on the
hand. A `look` takes the first detections received after the arm came to rest (the
detector runs a few frames a second, so it may be the next one after that), and the
camera's pose in the map at that moment. The geometry is skills/box_refine.py's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from cowp_interfaces.msg import DetectionArray
from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.camera_views import CameraView
from cowp_ros.ros.skill_backends.common import Timeouts
from cowp_ros.ros.skill_backends.tf_pose import TfTree
from cowp_ros.skills.box_refine import Box, BoxView, locate_from_boxes
from cowp_ros.skills.config import CameraConfig
from cowp_ros.skills.interfaces import ObjectPose


class RosBoxLocator:
    """ObjectLocator over the detections topic, the colour CameraInfo and TF."""

    def __init__(
        self,
        node: Node,
        camera: CameraConfig,
        tree: TfTree,
        surface_height: float,
        timeouts: Timeouts,
        detection_classes: Mapping[str, str],
        callback_group: CallbackGroup | None = None,
    ) -> None:
        self.camera, self.tree, self.timeouts = camera, tree, timeouts
        self.surface_height = surface_height
        self.detection_classes = dict(detection_classes)
        self.description = f"detections on {camera.detections_topic} ({camera.info_topic})"
        self.view = CameraView(
            node,
            DetectionArray,
            camera.detections_topic,
            10,
            camera.info_topic,
            callback_group,
        )
        self.subscriptions = self.view.subscriptions

    def classes(self, kind: str) -> tuple[str, ...]:
        """The detector's names for an object kind: skills.yaml's detection_classes
        mapping, and the kind itself."""
        mapped = self.detection_classes.get(kind)
        return (kind,) if mapped is None or mapped == kind else (mapped, kind)

    def locate(
        self, name: str, kind: str, expected: ObjectPose, cancel: threading.Event
    ) -> ObjectPose | None:
        fresh = self.view.after_rest(self.timeouts.detect_s, cancel)
        if fresh is None:
            if cancel.is_set():
                return None
            raise CowpError(
                f"no detections on {self.camera.detections_topic} with the camera's info on "
                f"{self.camera.info_topic} within {self.timeouts.detect_s:g} s (is "
                "situation_detector running on the wrist camera? robot.yaml camera.info_topic)"
            )
        detections, info = fresh
        frame = detections.header.frame_id or self.camera.optical_frame
        found = self.tree.lookup(frame)
        if found is None:
            raise CowpError(
                f"TF has no {self.tree.frame_id} -> {frame} (the detections' frame: the "
                "colour image's optical frame, robot.yaml camera.optical_frame)"
            )
        boxes = [
            Box(d.class_name, d.confidence, d.x_min, d.y_min, d.x_max, d.y_max)
            for d in detections.detections
        ]
        k = info.k
        view = BoxView(boxes, k[0], k[4], k[2], k[5], found[0])
        return locate_from_boxes(view, kind, self.classes(kind), expected, self.surface_height)
