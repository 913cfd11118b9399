"""The wrist depth camera as the skill layer's ObjectLocator: one fresh depth image after
the arm stopped above where an object should be, lifted to the map through TF.

A depth camera driver publishes sensor_msgs/Image (32FC1 in metres, or 16UC1 in
millimetres, as the REP 118 depth images of realsense2_camera and the Kinect drivers)
and its sensor_msgs/CameraInfo, both with the sensor-data QoS, in the camera's optical
frame, which TF places on the hand. A `look` asks for a frame taken after the arm came
to rest (a stamp no older than the request), so the image shows the view from the
look pose, never one from the way there; the camera's pose in the map is read from TF
at that moment. The geometry is skills/depth_refine.py's.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Image

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.camera_views import CameraView
from cowp_ros.ros.skill_backends.common import Timeouts
from cowp_ros.ros.skill_backends.tf_pose import TfTree
from cowp_ros.skills.config import CameraConfig
from cowp_ros.skills.depth_refine import DepthView, locate
from cowp_ros.skills.interfaces import ObjectPose


def depth_array(msg: Any) -> np.ndarray:
    """The image as metres (float32); CowpError for an encoding a depth camera does not use."""
    if msg.encoding == "32FC1":
        data = np.frombuffer(bytes(msg.data), dtype=np.float32)
        scale = 1.0
    elif msg.encoding == "16UC1":
        data = np.frombuffer(bytes(msg.data), dtype=np.uint16).astype(np.float32)
        scale = 0.001
    else:
        raise CowpError(
            f"the depth image is {msg.encoding}; a depth camera publishes 32FC1 (m) or 16UC1 (mm)"
        )
    if msg.is_bigendian:
        data = data.byteswap()
    per_row = msg.step // data.itemsize if msg.step else msg.width
    image = data.reshape(msg.height, per_row)[:, : msg.width]
    return image * scale


class RosDepthLocator:
    """ObjectLocator over a depth topic, its CameraInfo and TF."""

    def __init__(
        self,
        node: Node,
        camera: CameraConfig,
        tree: TfTree,
        surface_height: float,
        timeouts: Timeouts,
        callback_group: CallbackGroup | None = None,
    ) -> None:
        self.camera, self.tree, self.timeouts = camera, tree, timeouts
        self.surface_height = surface_height
        self.description = f"wrist depth camera ({camera.depth_topic})"
        self.view = CameraView(
            node,
            Image,
            camera.depth_topic,
            qos_profile_sensor_data,
            camera.depth_info_topic,
            callback_group,
        )
        self.subscriptions = self.view.subscriptions

    def locate(
        self, name: str, kind: str, expected: ObjectPose, cancel: threading.Event
    ) -> ObjectPose | None:
        fresh = self.view.after_rest(self.timeouts.topic_s, cancel)
        if fresh is None:
            if cancel.is_set():
                return None
            raise CowpError(
                f"no depth image with its camera info on {self.camera.depth_topic} within "
                f"{self.timeouts.topic_s:g} s (is the depth camera running? robot.yaml "
                "camera.depth_topic)"
            )
        image, info = fresh
        found = self.tree.lookup(self.camera.optical_frame)
        if found is None:
            raise CowpError(
                f"TF has no {self.tree.frame_id} -> {self.camera.optical_frame} (robot.yaml "
                "camera.optical_frame: the depth image's frame)"
            )
        k = info.k
        view = DepthView(depth_array(image), k[0], k[4], k[2], k[5], found[0])
        return locate(view, kind, expected, self.surface_height)
