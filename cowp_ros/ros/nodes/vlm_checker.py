"""vlm_checker: a vision-language model asked about the wrist image at each step.

What a COCO detector cannot see (dirt, cracks, chips) a vision-language model can be
asked, DKPROMPT's way: yes/no questions about the image
(`methods/dkprompt/visual_situations.py`). This node makes that a situation source on
the graph, beside situation_detector.

Subscribes:
  image_topic (sensor_msgs/Image, /wrist_camera/image_raw): frames (sensor-data QoS
      and reliable both match: the subscription is best effort, depth 1);
  current_step_topic (cowp_interfaces/PlanStep, /cowp/current_step): each step, once.
Publishes:
  situations_topic (cowp_interfaces/Situation, /cowp/situations): each defect seen
      ("the cup is dirty") and each precondition the image contradicts, once per object
      and sentence, source "vlm_checker".

At each new step a worker thread takes the first image received `settle_s` after the
step began (the camera then shows where the step acts), asks the step's questions in
one request to the user's OpenAI-compatible vision server (`vlm_url`; the embedded
model is text-only, so the node refuses to start without one), and publishes what the
answers report. A step with no such image within `image_timeout_s`, or a server error,
is logged and skipped: the robot goes on without the check.
"""

from __future__ import annotations

import os
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from cowp_interfaces.msg import PlanStep as PlanStepMsg
from cowp_interfaces.msg import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.dkprompt.questions import QuestionTemplates
from cowp_ros.methods.dkprompt.vision import EncodedImage, OpenAIVisionQuestioner
from cowp_ros.methods.dkprompt.visual_situations import (
    checks_for_step,
    load_defects,
    situations_from,
)
from cowp_ros.perception.image_encoding import bgr_from_image_bytes
from cowp_ros.planning import PlanStep
from cowp_ros.resources import share_path
from cowp_ros.ros.names import CURRENT_STEP_TOPIC, SITUATIONS_TOPIC, WRIST_IMAGE_TOPIC
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.parameters import Param, declare_parameters, positive

# The node's parameters; config/vlm_checker.yaml shows the same defaults.
PARAMETERS = (
    Param("vlm_url", "", "the OpenAI-compatible vision server (/v1 endpoint); required"),
    Param("vlm_model", "", "its model ('' = the first one /v1/models lists)"),
    Param("vlm_api_key_env", "COWP_VLM_API_KEY", "environment variable holding its key"),
    Param("task", "", "a registered task: its steps' preconditions are asked too"),
    Param("checks_config", "", "the defects to ask about ('' = the shipped file)"),
    Param("image_topic", WRIST_IMAGE_TOPIC, "wrist camera frames (sensor_msgs/Image)"),
    Param("current_step_topic", CURRENT_STEP_TOPIC, "the step the executor runs"),
    Param("situations_topic", SITUATIONS_TOPIC, "published situations (Situation)"),
    Param("situation_source", "vlm_checker", "the source field of published situations"),
    Param("confidence", 0.8, "the confidence of a situation the model reports", positive),
    Param("settle_s", 0.3, "seconds after a step began that its image is taken", positive),
    Param("image_timeout_s", 10.0, "seconds to wait for that image", positive),
    Param("timeout_s", 60.0, "seconds a request to the vision server may take", positive),
)


class VlmChecker(Node):
    """Step and image in; situations the vision model reports out."""

    def __init__(self, **node_kwargs: Any) -> None:
        super().__init__("vlm_checker", **node_kwargs)
        self._lock = threading.Condition()
        self._stopping = False
        self._image: tuple[Image, float] | None = None
        self._step: tuple[PlanStep, float] | None = None
        self._reported: set[tuple[str, str]] = set()
        self.steps_checked = 0
        self.published: list[str] = []
        self._worker = threading.Thread(target=self._check_loop, name="vlm_checker", daemon=True)
        self.questioner: OpenAIVisionQuestioner | None = None  # destroy_node may come first
        value = declare_parameters(self, PARAMETERS)
        if not value["vlm_url"]:
            raise CowpError(
                "vlm_checker needs a vision-language model server, and none is named",
                hint="set its vlm_url parameter to an OpenAI-compatible /v1 endpoint whose "
                "model takes images (llama.cpp's server with --mmproj, vLLM, Ollama); the "
                "embedded model is text-only",
            )
        questioner = self.questioner = OpenAIVisionQuestioner(
            LLMSettings(
                base_url=value["vlm_url"],
                model=value["vlm_model"] or None,
                api_key=os.environ.get(value["vlm_api_key_env"]) or "none",
                timeout_s=float(value["timeout_s"]),
                cache_path=None,
            )
        )
        checks = value["checks_config"] or share_path("config", "vlm_checker_checks.yaml")
        self.defects = load_defects(Path(checks))
        self.task = None
        self.templates: QuestionTemplates | None = None
        if value["task"]:
            from cowp_ros.tasks import get_task

            self.task = get_task(value["task"]).load()
            self.templates = QuestionTemplates.load()
        self.source: str = value["situation_source"]
        self.confidence = min(1.0, float(value["confidence"]))
        self.settle_s = float(value["settle_s"])
        self.image_timeout_s = float(value["image_timeout_s"])
        self.publisher = self.create_publisher(Situation, value["situations_topic"], 10)
        image_qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.create_subscription(Image, value["image_topic"], self.on_image, image_qos)
        self.create_subscription(PlanStepMsg, value["current_step_topic"], self.on_step, 10)
        self._worker.start()
        self.get_logger().info(
            f"asking {questioner.base_url} about {len(self.defects)} defects a step"
            + (f" and the preconditions of {value['task']}" if self.task is not None else "")
        )

    def on_image(self, msg: Image) -> None:
        with self._lock:
            self._image = (msg, time.monotonic())
            self._lock.notify_all()

    def on_step(self, msg: Any) -> None:
        step = PlanStep(str(msg.action).lower(), tuple(str(a) for a in msg.arguments))
        with self._lock:
            if self._step is not None and self._step[0] == step:
                return  # the same step announced again
            self._step = (step, time.monotonic())
            self._lock.notify_all()

    def _check_loop(self) -> None:
        checked: tuple[PlanStep, float] | None = None
        while True:
            with self._lock:
                self._lock.wait_for(partial(self._news, checked))
                if self._stopping:
                    return
                checked = self._step
            if checked is not None:
                self._check(*checked)

    def _news(self, checked: tuple[PlanStep, float] | None) -> bool:
        return self._stopping or self._step is not checked

    def _fresh_image(self, since: float) -> Image | None:
        deadline = time.monotonic() + self.image_timeout_s
        with self._lock:
            found = self._lock.wait_for(
                lambda: self._stopping or (self._image is not None and self._image[1] >= since),
                timeout=max(0.0, deadline - time.monotonic()),
            )
            return self._image[0] if found and self._image is not None else None

    def _check(self, step: PlanStep, began: float) -> None:
        checks = checks_for_step(step, self.defects, self.task, self.templates)
        if not checks:
            return
        image = self._fresh_image(began + self.settle_s)
        if image is None:
            if not self._stopping:
                self.get_logger().warning(
                    f"{step}: no camera image within {self.image_timeout_s:g} s; not checked"
                )
            return
        try:
            bgr = bgr_from_image_bytes(
                image.encoding, image.height, image.width, image.step, memoryview(image.data)
            )
            encoded = EncodedImage.from_array(bgr[:, :, ::-1].copy(), f"{step}")
            assert self.questioner is not None  # made before the worker started
            answers = self.questioner.ask([c.question for c in checks], encoded)
        except CowpError as err:
            self.get_logger().error(f"{step}: not checked: {err}", throttle_duration_sec=10.0)
            return
        for about, text in situations_from(checks, answers):
            if (about, text) in self._reported:
                continue
            self._reported.add((about, text))
            self.publisher.publish(
                Situation(
                    header=image.header,
                    text=text,
                    object=about,
                    source=self.source,
                    confidence=self.confidence,
                )
            )
            self.published.append(text)
            self.get_logger().info(f"situation: {text} (at {step})")
        self.steps_checked += 1

    def destroy_node(self) -> None:
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._worker.is_alive():
            self._worker.join(timeout=5.0)
        if self.questioner is not None:
            self.questioner.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run_node("vlm_checker", VlmChecker, args=args)


if __name__ == "__main__":
    main()
