"""The wrist camera of the physics world, rendered offscreen and published as a driver does.

MuJoCo renders the `wrist_camera` of the model (beside the Hand-E, looking along the
approach direction) with EGL on the CPU; at 320x240 that is 2 to 3 frames a second on
a loaded 2-core machine, so the camera is off unless asked for (camera_rate_hz). The
renderer reads a copy of the world's state taken under the lock, so rendering never
holds up the physics. Images go out as sensor_msgs/Image (rgb8) with the sensor-data
QoS camera drivers use, in the frame wrist_camera_optical_frame. The depth image
(WristDepthPublisher) is small and renders in tens of milliseconds, so it runs on its
own clock of wall time, for the executor's `look`.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from cowp_ros.physics.stepping import SteppingThread


class WristCameraPublisher:
    def __init__(
        self,
        node: Node,
        stepping: SteppingThread,
        topic: str,
        *,
        rate_hz: float,
        size: tuple[int, int],
    ) -> None:
        self.node = node
        self.stepping = stepping
        self.period_s = 1.0 / rate_hz
        self.size = size
        self.publisher = node.create_publisher(Image, topic, qos_profile_sensor_data)
        self.frames = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wrist_camera", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        import mujoco  # its OpenGL platform was chosen when physics/world.py imported it

        world = self.stepping.world
        width, height = self.size
        try:
            renderer = mujoco.Renderer(world.model, height=height, width=width)
        except Exception as err:  # no EGL: say so once, publish nothing
            self.node.get_logger().error(f"wrist camera off: offscreen rendering failed ({err})")
            return
        data = mujoco.MjData(world.model)
        while not self._stop.is_set():
            started = time.monotonic()
            with self.stepping.lock:
                data.qpos[:] = world.data.qpos
                data.time = world.data.time
            mujoco.mj_forward(world.model, data)
            renderer.update_scene(data, camera="wrist_camera")
            pixels = renderer.render()
            image = Image()
            whole = int(data.time)
            image.header.stamp.sec = whole
            image.header.stamp.nanosec = min(999_999_999, round((data.time - whole) * 1e9))
            image.header.frame_id = "wrist_camera_optical_frame"
            image.height, image.width = int(pixels.shape[0]), int(pixels.shape[1])
            image.encoding = "rgb8"
            image.step = image.width * 3
            image.data = pixels.tobytes()
            self.publisher.publish(image)
            self.frames += 1
            self._stop.wait(max(0.0, self.period_s - (time.monotonic() - started)))
        renderer.close()


class WristDepthPublisher:
    """The wrist camera's depth image (32FC1, metres along the optical axis, REP 118) and
    its CameraInfo, as a depth camera driver publishes them, a few frames a second of
    wall time: small depth images render in a few tens of milliseconds here."""

    def __init__(
        self,
        node: Node,
        stepping: SteppingThread,
        topic: str,
        info_topic: str,
        frame_id: str,
        *,
        rate_hz: float,
        size: tuple[int, int],
    ) -> None:
        self.node, self.stepping, self.frame_id = node, stepping, frame_id
        self.period_s = 1.0 / rate_hz
        self.size = size
        self.publisher = node.create_publisher(Image, topic, qos_profile_sensor_data)
        self.info_publisher = node.create_publisher(CameraInfo, info_topic, qos_profile_sensor_data)
        self.frames = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wrist_depth", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)

    def _info(self, fovy_rad: float) -> CameraInfo:
        width, height = self.size
        f = (height / 2) / math.tan(fovy_rad / 2)
        info = CameraInfo()
        info.width, info.height = width, height
        info.distortion_model = "plumb_bob"
        info.d = [0.0] * 5
        cx, cy = (width - 1) / 2, (height - 1) / 2
        info.k = [f, 0.0, cx, 0.0, f, cy, 0.0, 0.0, 1.0]
        info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        info.p = [f, 0.0, cx, 0.0, 0.0, f, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
        return info

    def _run(self) -> None:
        import mujoco

        world = self.stepping.world
        width, height = self.size
        try:
            renderer = mujoco.Renderer(world.model, height=height, width=width)
            renderer.enable_depth_rendering()
        except Exception as err:  # no EGL: say so once, publish nothing
            self.node.get_logger().error(f"depth camera off: offscreen rendering failed ({err})")
            return
        camera = world.model.camera("wrist_camera").id
        info = self._info(math.radians(float(world.model.cam_fovy[camera])))
        data = mujoco.MjData(world.model)
        while not self._stop.is_set():
            started = time.monotonic()
            with self.stepping.lock:
                data.qpos[:] = world.data.qpos
                data.time = world.data.time
            mujoco.mj_forward(world.model, data)
            renderer.update_scene(data, camera=camera)
            depth = renderer.render().astype(np.float32)
            image = Image()
            whole = int(data.time)
            image.header.stamp.sec = whole
            image.header.stamp.nanosec = min(999_999_999, round((data.time - whole) * 1e9))
            image.header.frame_id = self.frame_id
            image.height, image.width = int(depth.shape[0]), int(depth.shape[1])
            image.encoding = "32FC1"
            image.step = image.width * 4
            image.data = depth.tobytes()
            info.header = image.header
            self.info_publisher.publish(info)
            self.publisher.publish(image)
            self.frames += 1
            self._stop.wait(max(0.0, self.period_s - (time.monotonic() - started)))
        renderer.close()
