"""situation_detector: YOLO on the wrist camera, and the situations it implies for the plan.

Subscribes:
  image_topic (sensor_msgs/Image, /wrist_camera/image_raw): frames; QoS `image_qos`
      (reliable by default: best-effort drops whole large frames over DDS on a busy
      machine; choose best_effort for drivers that publish with sensor-data QoS);
  camera_info_topic (sensor_msgs/CameraInfo, optional): its frame_id stands in for
      images that carry none;
  current_step_topic (cowp_interfaces/PlanStep, /cowp/current_step): the step the
      executor runs; its first argument the detector knows is the target object, and
      its skill (skills_config) says what the gripper holds: never "missing".
Publishes:
  detections_topic (cowp_interfaces/DetectionArray, /cowp/detections): every frame;
  annotated_topic (sensor_msgs/Image, bgr8): boxes and situations drawn, for rviz;
  situations_topic (cowp_interfaces/Situation, /cowp/situations): the target object
      missing (from distinct views without it) or occupied (a container with something
      in it, debounced over frames), source "situation_detector".

At start-up the node names the plan objects (watch_objects; else every object of the
registered tasks' problems) whose class the model does not have: nothing will ever be
said about them, and the fix is an object_classes entry or another model.

Frames are throttled: callbacks only keep the newest frame, a worker thread detects on
it at most `max_rate_hz` times a second, and frames that arrive meanwhile are dropped
(counted in the periodic log line), so the node never falls behind the camera.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from cowp_interfaces.msg import Detection as DetectionMsg
from cowp_interfaces.msg import DetectionArray, PlanStep, Situation
from cowp_ros.errors import CowpError
from cowp_ros.perception.annotate import annotate
from cowp_ros.perception.class_names import ModelClasses
from cowp_ros.perception.detections import Detection
from cowp_ros.perception.detectors import BACKENDS, create_detector
from cowp_ros.perception.image_encoding import bgr8_image_fields, bgr_from_image_bytes
from cowp_ros.perception.situation_tracker import (
    SituationTracker,
    TrackerSettings,
    view_signature,
)
from cowp_ros.perception.situations import (
    DEFAULT_OBJECT_CLASSES,
    ObjectClassMap,
    Target,
    describe_unwatchable,
)
from cowp_ros.resources import share_path
from cowp_ros.ros.names import (
    ANNOTATED_IMAGE_TOPIC,
    CURRENT_STEP_TOPIC,
    DETECTIONS_TOPIC,
    SITUATIONS_TOPIC,
    WRIST_CAMERA_INFO_TOPIC,
    WRIST_IMAGE_TOPIC,
)
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, declare_parameters
from cowp_ros.skills.held_objects import HeldObjects
from cowp_ros.skills.roles import registered_skill_map
from cowp_ros.skills.skill_map import load_skill_map

# The node's parameters; config/situation_detector.yaml shows the same defaults.
PARAMETERS = (
    Param("image_topic", WRIST_IMAGE_TOPIC, "wrist camera images (sensor_msgs/Image)"),
    Param(
        "image_qos",
        "reliable",
        "image subscription reliability: reliable | best_effort (for sensor-data QoS drivers)",
    ),
    Param(
        "camera_info_topic",
        WRIST_CAMERA_INFO_TOPIC,
        "camera info, for the frame_id of images without one ('' = do not subscribe)",
    ),
    Param("current_step_topic", CURRENT_STEP_TOPIC, "the plan step being executed (PlanStep)"),
    Param("detections_topic", DETECTIONS_TOPIC, "published detections (DetectionArray)"),
    Param("annotated_topic", ANNOTATED_IMAGE_TOPIC, "annotated image for rviz ('' = off)"),
    Param("situations_topic", SITUATIONS_TOPIC, "published situations (Situation)"),
    Param("backend", "ultralytics", f"detector backend: {' | '.join(BACKENDS)}"),
    Param(
        "model",
        "",
        "model file ('' = the COCO YOLOv3-tiny that make setup provisions; or any "
        "ultralytics model on disk; never downloaded)",
    ),
    Param("imgsz", 416, "inference size in pixels, a multiple of 32 (320 faster, 640 finer)"),
    Param("confidence_threshold", 0.25, "detections below this confidence are ignored (0..1)"),
    Param(
        "threads", 0, "onnxruntime threads (0 = one per core); the ultralytics backend ignores it"
    ),
    Param(
        "max_rate_hz",
        10.0,
        "most frames detected per second; newer frames replace older (0 = no cap)",
    ),
    Param(
        "target_class",
        "",
        "detector class to watch whatever the plan step ('' = the current step's object)",
    ),
    Param(
        "object_classes",
        list(DEFAULT_OBJECT_CLASSES),
        "PDDL object (or name without _N) = detector class, e.g. mug=cup; unlisted names map "
        "to themselves without the _N suffix, underscores as spaces",
    ),
    Param("window_frames", 5, "situations are judged over this many recent frames"),
    Param("min_frames", 3, "frames of the window a situation must hold in before it is reported"),
    Param(
        "occupied_min_inside",
        0.6,
        "share of another object's box inside the target's box that counts as 'in it' (0..1)",
    ),
    Param(
        "missing_view_recall",
        0.5,
        "chance the model sees a present target in one view (0..1): each distinct view "
        "without it adds this much evidence that it is missing",
    ),
    Param(
        "missing_min_confidence",
        0.85,
        "confidence at which a target not seen is reported missing (0..1)",
    ),
    Param(
        "skills_config",
        "",
        "skills file whose grasp/release steps say what the hand holds ('' = the shipped one)",
    ),
    Param(
        "watch_objects",
        [""],
        "plan objects to check the model can watch at start-up ([''] = every object of the "
        "registered tasks)",
    ),
    Param(
        "situation_source",
        "situation_detector",
        "the source field of published situations (the narrative names it: saw (...))",
    ),
    Param(
        "stats_period_s", 30.0, "seconds between log lines with frame rate and drops (0 = never)"
    ),
)


class SituationDetector(Node):
    """Camera frames in; detections, an annotated image and situations out."""

    def __init__(self, **node_kwargs: Any) -> None:
        super().__init__("situation_detector", **node_kwargs)
        # Worker state first: destroy_node() must work even if the set-up below fails.
        self._frame_lock = threading.Lock()
        self._frame_ready = threading.Condition(self._frame_lock)
        self._pending: Image | None = None
        self._stopping = False
        self.frames_received = 0
        self.frames_dropped = 0
        self.frames_detected = 0
        self._worker = threading.Thread(target=self._detect_loop, name="detector", daemon=True)
        value = declare_parameters(self, PARAMETERS)
        self._validate(value)

        self.detector = create_detector(
            backend=value["backend"],
            model=value["model"],
            imgsz=int(value["imgsz"]),
            confidence=float(value["confidence_threshold"]),
            threads=int(value["threads"]),
        )
        # The first inference sets up the backend (ultralytics builds its predictor): do it
        # now, so the first camera frame is not the one that pays for it.
        self.detector.detect(np.zeros((self.detector.imgsz, self.detector.imgsz, 3), np.uint8))
        self.model_classes = ModelClasses(self.detector.class_names)
        self.class_map = ObjectClassMap.from_entries(value["object_classes"])
        self.fixed_target: Target | None = None
        if value["target_class"]:
            spelled = self.model_classes.spelling(value["target_class"])
            if spelled is None:
                raise CowpError(
                    f"parameter target_class: the model has no class {value['target_class']!r}",
                    hint=f"its classes: {', '.join(self.detector.class_names)}",
                )
            self.fixed_target = Target(spelled, spelled)
        self.tracker = SituationTracker(_tracker_settings(value))
        self.hand = HeldObjects(
            registered_skill_map(
                load_skill_map(Path(value["skills_config"] or share_path("config", "skills.yaml")))
            )[0]
        )
        self.held: str | None = None
        self.situation_source: str = value["situation_source"]
        self.min_period_s = 1.0 / value["max_rate_hz"] if value["max_rate_hz"] > 0 else 0.0
        self.target: Target | None = None
        self.step_target: Target | None = None
        self.last_step = ""
        self.camera_frame_id = ""

        self.detections_publisher = self.create_publisher(
            DetectionArray, value["detections_topic"], 10
        )
        self.annotated_publisher = (
            self.create_publisher(Image, value["annotated_topic"], 2)
            if value["annotated_topic"]
            else None
        )
        self.situations_publisher = self.create_publisher(Situation, value["situations_topic"], 10)
        image_qos = QoSProfile(
            depth=1,  # the newest frame is all we want; DDS drops older ones for us
            reliability=ReliabilityPolicy.RELIABLE
            if value["image_qos"] == "reliable"
            else ReliabilityPolicy.BEST_EFFORT,
        )
        self.create_subscription(Image, value["image_topic"], self.on_image, image_qos)
        if value["camera_info_topic"]:
            self.create_subscription(
                CameraInfo, value["camera_info_topic"], self.on_camera_info, qos_profile_sensor_data
            )
        self.create_subscription(PlanStep, value["current_step_topic"], self.on_step, 10)

        self._worker.start()
        self._image_source = f"{value['image_topic']} (image_qos {value['image_qos']})"
        if value["stats_period_s"] > 0:
            self._stats_since = self._heard_at = time.monotonic()
            self.create_timer(float(value["stats_period_s"]), self._log_stats)
        self.get_logger().info(
            f"{self.detector.backend} on {self.detector.model_path.name} "
            f"at {self.detector.imgsz} px; "
            f"images from {value['image_topic']}; target: "
            f"{value['target_class'] or 'from ' + value['current_step_topic']}"
        )
        unwatchable = self.class_map.unwatchable(_plan_objects(value), self.model_classes)
        if unwatchable:
            self.get_logger().warning(
                f"cannot watch plan objects of {len(unwatchable)} kinds, the model has no "
                f"class for them: {describe_unwatchable(unwatchable)} (map a kind to a class "
                "the model has with object_classes, or use a model that knows it)"
            )

    @staticmethod
    def _validate(value: dict[str, Any]) -> None:
        """Refuse nonsensical parameters at start-up, naming the parameter."""
        if value["backend"] not in BACKENDS:
            raise CowpError(
                f"parameter backend must be one of {', '.join(BACKENDS)}, got {value['backend']!r}"
            )
        for name in ("window_frames", "min_frames", "imgsz"):
            if not isinstance(value[name], int) or value[name] < 1:
                raise CowpError(f"parameter {name} must be a positive integer, got {value[name]!r}")
        for name in (
            "confidence_threshold",
            "occupied_min_inside",
            "missing_view_recall",
            "missing_min_confidence",
        ):
            if not 0.0 <= float(value[name]) <= 1.0:
                raise CowpError(f"parameter {name} must be between 0 and 1, got {value[name]!r}")
        if value["image_qos"] not in {"reliable", "best_effort"}:
            raise CowpError(
                f"parameter image_qos must be reliable or best_effort, got {value['image_qos']!r}"
            )
        if value["max_rate_hz"] < 0:
            raise CowpError(f"parameter max_rate_hz must be >= 0, got {value['max_rate_hz']!r}")
        if (
            not value["image_topic"]
            or not value["detections_topic"]
            or not value["situations_topic"]
        ):
            raise CowpError(
                "parameters image_topic, detections_topic and situations_topic must be set"
            )

    # --- callbacks (executor thread): cheap, they only hand over -------------------------

    def on_image(self, msg: Image) -> None:
        """Keep only the newest frame; an unprocessed older one is dropped."""
        with self._frame_ready:
            self.frames_received += 1
            if self._pending is not None:
                self.frames_dropped += 1
            self._pending = msg
            self._frame_ready.notify()

    def on_camera_info(self, msg: CameraInfo) -> None:
        self.camera_frame_id = msg.header.frame_id

    def on_step(self, msg: PlanStep) -> None:
        """Follow the executor: the step's first argument the detector knows is the target."""
        step = f"{msg.action}({', '.join(msg.arguments)})"
        if step == self.last_step:
            return  # the same step announced again
        self.last_step = step
        self.held = self.hand.step(msg.action, list(msg.arguments))
        self.step_target = self.class_map.target_in_step(list(msg.arguments), self.model_classes)
        if self.step_target is None:
            self.get_logger().info(f"step {step}: no object the detector knows; no situations")
        else:
            self.get_logger().info(
                f"step {step}: watching {self.step_target.object_name} "
                f"({self.step_target.class_name})" + (f"; holding {self.held}" if self.held else "")
            )

    # --- detection (worker thread) ------------------------------------------------------

    def _current_target(self) -> Target | None:
        return self.fixed_target or self.step_target

    def _detect_loop(self) -> None:
        last_start = 0.0
        while True:
            wait_s = self.min_period_s - (time.monotonic() - last_start)
            if wait_s > 0:
                time.sleep(wait_s)  # frames arriving meanwhile replace each other
            with self._frame_ready:
                while self._pending is None and not self._stopping:
                    self._frame_ready.wait(0.5)
                if self._stopping:
                    return
                msg, self._pending = self._pending, None
            last_start = time.monotonic()
            try:
                self._process(msg)
            except Exception as err:  # keep the camera pipeline alive, and say why
                if not self.context.ok():
                    return  # shutting down (Ctrl-C): the frame in hand no longer matters
                text = str(err) if isinstance(err, CowpError) else f"detection failed: {err!r}"
                self.get_logger().error(text, throttle_duration_sec=10.0)

    def _process(self, msg: Image) -> None:
        frame = bgr_from_image_bytes(
            msg.encoding, msg.height, msg.width, msg.step, memoryview(msg.data)
        )
        detections = self.detector.detect(frame)
        with self._frame_lock:
            self.frames_detected += 1
        header = msg.header
        if not header.frame_id:
            header.frame_id = self.camera_frame_id
        self.detections_publisher.publish(
            DetectionArray(header=header, detections=[_detection_msg(d) for d in detections])
        )

        target = self._current_target()
        if target != self.target:
            self.tracker.reset()  # evidence about the old target says nothing of the new
            self.target = target
        frame_situations, reports = (
            self.tracker.update(
                detections, target, view_signature(frame), held=target.object_name == self.held
            )
            if target
            else ([], [])
        )
        for report in reports:
            self.situations_publisher.publish(
                Situation(
                    header=header,
                    text=report.text,
                    object=report.object_name,
                    source=self.situation_source,
                    confidence=float(report.confidence),
                )
            )
            self.get_logger().info(f"situation: {report.text} ({report.confidence:.2f})")

        if (
            self.annotated_publisher is not None
            and self.annotated_publisher.get_subscription_count()
        ):
            drawn = annotate(
                frame,
                detections,
                target.class_name if target else "",
                [s.text for s in frame_situations],
            )
            height, width, step, data = bgr8_image_fields(drawn)
            self.annotated_publisher.publish(
                Image(
                    header=header,
                    height=height,
                    width=width,
                    encoding="bgr8",
                    is_bigendian=0,
                    step=step,
                    data=data,
                )
            )

    def _log_stats(self) -> None:
        now = time.monotonic()
        elapsed = max(now - self._stats_since, 1e-9)
        self._stats_since = now
        with self._frame_lock:
            received, dropped, detected = (
                self.frames_received,
                self.frames_dropped,
                self.frames_detected,
            )
            self.frames_received = self.frames_dropped = self.frames_detected = 0
        if received:
            self._heard_at = now
            self.get_logger().info(
                f"{received / elapsed:.1f} frames/s in, {detected / elapsed:.1f} detected/s, "
                f"{dropped} dropped to keep up"
            )
        else:  # a camera that stopped (or never started) is said, not silently waited for
            self.get_logger().warning(
                f"no frames on {self._image_source} for {now - self._heard_at:.0f} s: is the "
                "camera publishing, with a QoS this subscription matches?"
            )

    def destroy_node(self) -> None:
        with self._frame_ready:
            self._stopping = True
            self._frame_ready.notify()
        if self._worker.is_alive():
            self._worker.join(timeout=5.0)
        super().destroy_node()


def _tracker_settings(value: dict[str, Any]) -> TrackerSettings:
    return TrackerSettings(
        window_frames=int(value["window_frames"]),
        min_frames=int(value["min_frames"]),
        occupied_min_inside=float(value["occupied_min_inside"]),
        missing_view_recall=float(value["missing_view_recall"]),
        missing_min_confidence=float(value["missing_min_confidence"]),
    )


def _plan_objects(value: dict[str, Any]) -> list[str]:
    """The objects a plan may name: the parameter's, else the registered tasks' own."""
    named = [name for name in value["watch_objects"] if name]
    if named:
        return named
    from cowp_ros.tasks import all_tasks

    objects: set[str] = set()
    for spec in all_tasks().values():
        objects |= spec.load().problem_object_names
    return sorted(objects)


def _detection_msg(detection: Detection) -> DetectionMsg:
    return DetectionMsg(
        class_name=detection.class_name,
        confidence=float(detection.confidence),
        x_min=float(detection.x_min),
        y_min=float(detection.y_min),
        x_max=float(detection.x_max),
        y_max=float(detection.y_max),
    )


def main(args: list[str] | None = None) -> None:
    # Callbacks only hand frames over and detection has its own thread: one thread spins.
    run_node("situation_detector", SituationDetector, args=args)


if __name__ == "__main__":
    main()
