"""The colour camera's detections as the executor's locator, over real ROS topics: a
DetectionArray stamped in the optical frame, that frame on /tf_static, the colour
CameraInfo; the box lifted to where the object stands. Silence is named, with the
topics to check."""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Iterator

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from test_box_refine import SURFACE, camera_above, view_of

from cowp_ros.errors import CowpError
from cowp_ros.ros.skill_backends.common import Timeouts
from cowp_ros.skills.interfaces import ObjectPose

pytestmark = pytest.mark.ros

QUICK = Timeouts(topic_s=5.0, detect_s=10.0)


def transform_msg(matrix, parent: str, child: str):
    import mujoco
    import numpy as np
    from geometry_msgs.msg import TransformStamped

    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
        float(v) for v in matrix[:3, 3]
    )
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(matrix[:3, :3]).flatten())
    w, x, y, z = quat
    t.transform.rotation.x, t.transform.rotation.y = float(x), float(y)
    t.transform.rotation.z, t.transform.rotation.w = float(z), float(w)
    return t


@pytest.fixture
def node(harness) -> Iterator:
    made = harness.node(f"box_locator_{time.monotonic_ns()}")
    yield made
    harness.remove(made)


def test_a_box_on_the_detections_topic_says_where_the_cup_stands(node, robot) -> None:
    from sensor_msgs.msg import CameraInfo
    from tf2_msgs.msg import TFMessage

    from cowp_interfaces.msg import Detection, DetectionArray
    from cowp_ros.ros.skill_backends.box_locator import RosBoxLocator
    from cowp_ros.ros.skill_backends.tf_pose import TfTree

    frame = robot.camera.optical_frame
    truth = ObjectPose(2.83, 0.61, SURFACE, 0.0)
    camera = camera_above(2.8, 0.65, SURFACE + 0.45, 0.2)
    box = view_of([("cup", "cup", truth)], camera).boxes[0]
    static = QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )
    tf = node.create_publisher(TFMessage, "/tf_static", static)
    tf.publish(TFMessage(transforms=[transform_msg(camera, "map", frame)]))
    info_publisher = node.create_publisher(
        CameraInfo, robot.camera.info_topic, qos_profile_sensor_data
    )
    detections = node.create_publisher(DetectionArray, robot.camera.detections_topic, 10)
    info = CameraInfo(width=320, height=240)
    info.header.frame_id = frame
    info.k = [300.0, 0.0, 160.0, 0.0, 300.0, 120.0, 0.0, 0.0, 1.0]
    message = DetectionArray(
        detections=[
            Detection(
                class_name="cup",
                confidence=0.7,
                x_min=box.x_min,
                y_min=box.y_min,
                x_max=box.x_max,
                y_max=box.y_max,
            )
        ]
    )
    message.header.frame_id = frame
    stop = threading.Event()

    def publish() -> None:  # a camera and a detector running at 10 frames a second
        while not stop.wait(0.1):
            info_publisher.publish(info)
            detections.publish(message)

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    try:
        tree = TfTree(node, "map", None)
        locator = RosBoxLocator(node, robot.camera, tree, SURFACE, QUICK, {"mug": "cup"})
        expected = ObjectPose(2.80, 0.65, SURFACE, 0.0)
        found = locator.locate("cup_1", "cup", expected, threading.Event())
        assert found is not None
        assert math.hypot(found.x - truth.x, found.y - truth.y) < 0.002
        # a mug is what the detector calls a cup (skills.yaml detection_classes)
        assert locator.locate("mug_1", "mug", expected, threading.Event()) is not None
        # a glass is not
        assert locator.locate("glass_1", "glass", expected, threading.Event()) is None
    finally:
        stop.set()
        thread.join()


def test_no_detections_names_the_topics_to_check(node, robot) -> None:
    from cowp_ros.ros.skill_backends.box_locator import RosBoxLocator
    from cowp_ros.ros.skill_backends.tf_pose import TfTree

    quiet = dataclasses.replace(
        robot.camera,
        detections_topic=f"/unserved_{time.monotonic_ns()}/detections",
        info_topic=f"/unserved_{time.monotonic_ns()}/camera_info",
    )
    locator = RosBoxLocator(
        node, quiet, TfTree(node, "map", None), SURFACE, Timeouts(detect_s=0.3), {}
    )
    with pytest.raises(CowpError) as raised:
        locator.locate("cup_1", "cup", ObjectPose(2.8, 0.6, SURFACE, 0.0), threading.Event())
    assert quiet.detections_topic in str(raised.value) and quiet.info_topic in str(raised.value)
    cancel = threading.Event()
    cancel.set()
    assert locator.locate("cup_1", "cup", ObjectPose(2.8, 0.6, SURFACE, 0.0), cancel) is None
