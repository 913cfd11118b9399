"""The wrist camera of the physics world, rendered offscreen and published as a driver does.

MuJoCo renders the `wrist_camera` of the model (beside the Hand-E, looking along the
approach direction) with EGL on the CPU; at 320x240 that is 2 to 3 frames a second on
a loaded 2-core machine, so the camera is off unless asked for (camera_rate_hz). The
renderer reads a copy of the world's state taken under the lock, so rendering never
holds up the physics. Images go out as sensor_msgs/Image (rgb8) with the sensor-data
QoS camera drivers use, in the frame wrist_camera_optical_frame.
"""

from __future__ import annotations

import threading
import time

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Image

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
