"""The situation_detector node as a real process, fed by replaying a bag of real photos.

The bag is written in the test from real images (skimage's coffee cup, the same cup
with a real person crop pasted inside it, ultralytics' bus without any cup), so the
node must report, for the plan step fill_cup(cup_1, faucet_1): first nothing, then
"occupied", then "missing", each debounced over frames.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "situation_detector.yaml"
FRAMES_PER_PHASE = 8
FPS = 3.0  # slow enough that a busy 2-core machine still sees every phase


@pytest.fixture
def real_image_bag(
    tmp_path: Path,
    coffee: np.ndarray,
    cup_with_person_inside: np.ndarray,
    bus: np.ndarray,
    zidane: np.ndarray,
    astronaut: np.ndarray,
) -> Path:
    """A free cup, the cup with something in it, then views with no cup at all.

    The last phase is distinct views (the camera looking around), as "missing" needs:
    the same picture again is no new evidence. Eight views, of which the node needs
    three, so frames it drops under load cannot take the evidence away.
    """
    from cowp_ros.ros.bags import write_image_bag

    views = [bus, zidane, astronaut]
    views += [cv2.flip(view, 1) for view in views] + [cv2.flip(bus, 0), cv2.flip(zidane, 0)]
    frames = [frame for phase in (coffee, cup_with_person_inside) for frame in [phase] * 8]
    return write_image_bag(tmp_path / "wrist_camera", [*frames, *views], fps=FPS)


def stop(process: subprocess.Popen[str]) -> int:
    """Ctrl-C, as a person or the supervisor would; returns the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


@pytest.fixture
def detector_process(default_model: Path, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    log = (tmp_path / "situation_detector.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cowp_ros.ros.nodes.situation_detector",
            "--ros-args", "--params-file", str(CONFIG), "-p", "stats_period_s:=2.0",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    yield process
    stop(process)
    log.close()


def stamp_ns(message: object) -> int:
    stamp = message.header.stamp  # type: ignore[attr-defined]
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class Listener:
    """The test's own node: plays the executor (current step) and records the outputs."""

    def __init__(self, record_to: Path) -> None:
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Image

        from cowp_interfaces.msg import DetectionArray, PlanStep, Situation
        from cowp_ros.ros.own_node import OwnNode

        self.own = OwnNode("situation_detector_test")
        self.node = self.own.node
        self.detections: list[DetectionArray] = []
        self.situations: list[Situation] = []
        self.annotated: list[Image] = []
        self.subscriptions = [
            self.node.create_subscription(
                DetectionArray, "/cowp/detections", self.detections.append, 50
            ),
            self.node.create_subscription(
                Situation, "/cowp/situations", self.situations.append, 50
            ),
            self.node.create_subscription(
                Image, "/cowp/detections/image", self.annotated.append, qos_profile_sensor_data
            ),
        ]
        step_publisher = self.node.create_publisher(PlanStep, "/cowp/current_step", 10)
        step = PlanStep(action="fill_cup", arguments=["cup_1", "faucet_1"])
        # Re-announced like a heartbeat, so discovery timing cannot lose it.
        self.node.create_timer(0.5, lambda: step_publisher.publish(step))
        from cowp_ros.ros.bags import BagRecorder

        # The outputs also go to a bag, checked after shutdown as launch_testing would.
        self.recorder = BagRecorder(
            self.node,
            record_to,
            {
                "/cowp/situations": "cowp_interfaces/msg/Situation",
                "/cowp/detections": "cowp_interfaces/msg/DetectionArray",
            },
        )
        self.own.spin_in_background()

    def wait_until_connected(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all(s.get_publisher_count() > 0 for s in self.subscriptions):
                return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        self.recorder.close()
        self.own.close()


def test_replayed_real_images_give_detections_and_situations(
    real_image_bag: Path, detector_process: subprocess.Popen[str]
) -> None:
    from cowp_ros.ros.bags import read_bag, replay_bag

    recorded = real_image_bag.parent / "outputs"
    listener = Listener(record_to=recorded)
    try:
        # Start-up (imports, model load) plus discovery: wait for it, never a fixed sleep.
        assert listener.wait_until_connected(timeout_s=60.0), "node never came up"
        assert detector_process.poll() is None
        sent = replay_bag(listener.node, real_image_bag, subscriber_timeout_s=30.0)
        assert sent.published == 3 * FRAMES_PER_PHASE
        assert sent.delivered, sent
        # The newest frame is never dropped, so its detections mark the end of the stream.
        last_stamp_ns = list(read_bag(real_image_bag))[-1].timestamp_ns
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and not any(
            stamp_ns(a) == last_stamp_ns for a in listener.detections
        ):
            time.sleep(0.1)
    finally:
        listener.close()
        exit_code = stop(detector_process)
    log = (real_image_bag.parent / "situation_detector.log").read_text()
    assert exit_code == 0, log
    assert "Traceback" not in log and "ERROR" not in log, log
    # At start-up it named the plan objects it can never see, by kind.
    assert "cannot watch plan objects" in log and "faucet (faucet_1)" in log, log
    unwatched = log.split("cannot watch")[1].splitlines()[0]
    assert "table_1" not in unwatched and "sofa_1" not in unwatched, unwatched

    # Detections: frames the node could not keep up with are dropped by design (how many
    # depends on the machine's load), but the last one is always detected.
    assert any(stamp_ns(a) == last_stamp_ns for a in listener.detections)
    assert len(listener.detections) >= FRAMES_PER_PHASE
    classes_seen = [{d.class_name for d in a.detections} for a in listener.detections]
    assert any("cup" in c and "person" not in c for c in classes_seen)  # the free cup
    assert any({"bus", "person"} <= c for c in classes_seen)  # bus.jpg
    assert all(a.header.frame_id == "wrist_camera" for a in listener.detections)

    # Situations: occupied while the person crop sits in the cup, then missing; once each.
    summary = [(s.object, s.text, s.source) for s in listener.situations]
    assert summary == [
        ("cup_1", "the cup is occupied: a person in it", "situation_detector"),
        ("cup_1", "the cup is missing", "situation_detector"),
    ], summary
    for situation in listener.situations:
        assert 0.3 <= situation.confidence <= 1.0
        assert situation.header.frame_id == "wrist_camera"

    # The bag recorded the same situations, byte for byte what the node published.
    from cowp_ros.ros.bags import deserialize

    in_bag = [deserialize(r) for r in read_bag(recorded, topics=["/cowp/situations"])]
    assert [(s.object, s.text) for s in in_bag] == [(s[0], s[1]) for s in summary]
    assert listener.recorder.counts["/cowp/detections"] == len(listener.detections)

    # The annotated image for rviz, drawn only because someone subscribed.
    assert listener.annotated, "no annotated image"
    assert listener.annotated[0].encoding == "bgr8"
    assert (listener.annotated[0].width, listener.annotated[0].height) in {(600, 400), (810, 1080)}


def test_the_node_says_when_no_frames_arrive(default_model: Path, tmp_path: Path) -> None:
    """A camera that is not publishing is a warning line each stats period, naming the
    topic, as perception nodes report stalled input."""
    log_path = tmp_path / "situation_detector.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "cowp_ros.ros.nodes.situation_detector",
                "--ros-args", "-p", "stats_period_s:=0.5",
                "-p", "image_topic:=/nobody_publishes_here/image_raw",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        try:
            # Start-up (imports, model load) takes seconds; wait for the line itself.
            deadline = time.monotonic() + 120.0
            while "no frames on" not in log_path.read_text() and time.monotonic() < deadline:
                assert process.poll() is None, log_path.read_text()
                time.sleep(0.2)
        finally:
            assert stop(process) == 0, log_path.read_text()
    text = log_path.read_text()
    assert "no frames on /nobody_publishes_here/image_raw (image_qos reliable) for" in text, text
    assert "Traceback" not in text


def test_node_refuses_bad_parameters_with_a_clear_message(default_model: Path) -> None:
    result = subprocess.run(
        [
            sys.executable, "-m", "cowp_ros.ros.nodes.situation_detector",
            "--ros-args", "-p", "backend:=tensorrt",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert (
        "parameter backend must be one of ultralytics, onnxruntime" in result.stderr + result.stdout
    )
    assert "Traceback" not in result.stderr
