"""The vlm_checker node on real ROS topics against a scripted vision server: a step
and a wrist image in, the defects the model says yes to out as situations, each once;
the step's preconditions asked too when the task is named; no server named, no start."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer, completion
from cowp_ros.errors import CowpError

pytestmark = pytest.mark.ros


class VisionModel:
    """Says yes to the questions matching `yes` (a pattern), no to the others."""

    def __init__(self, yes: str) -> None:
        self.yes = re.compile(yes, re.IGNORECASE)
        self.asked: list[list[str]] = []
        self.images = 0

    def __call__(self, request: Request) -> Reply | None:
        if not request.is_chat:
            return None
        content = request.json["messages"][-1]["content"]
        self.images += sum(1 for part in content if part.get("type") == "image_url")
        text = request.last_user_text
        questions = [q.strip() for q in re.findall(r"^\d+\. (.*)$", text, re.MULTILINE)]
        self.asked.append(questions)
        lines = [
            f"{i}. {'yes' if self.yes.search(q) else 'no'}" for i, q in enumerate(questions, 1)
        ]
        return Reply(body=completion("\n".join(lines), completion_tokens=4 * len(lines)))


@pytest.fixture
def ros() -> Iterator[Any]:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set() and context.ok():
            executor.spin_once(timeout_sec=0.05)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    yield context, executor
    stop.set()
    thread.join()
    for node in list(executor.get_nodes()):
        executor.remove_node(node)
        node.destroy_node()
    rclpy.shutdown(context=context)


def image_msg(stamp_s: int) -> Any:
    from sensor_msgs.msg import Image

    pixels = np.full((24, 32, 3), 180, dtype=np.uint8)
    msg = Image(height=24, width=32, encoding="rgb8", step=32 * 3, data=pixels.tobytes())
    msg.header.stamp.sec = stamp_s
    msg.header.frame_id = "wrist_camera_optical_frame"
    return msg


def run_steps(ros, server_url: str, steps: list[tuple[str, list[str]]], expect: int, **params: Any):
    """Start the node, announce each step with images streaming; the node and the
    situations the probe heard once `expect` of them arrived."""
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    from cowp_interfaces.msg import PlanStep, Situation
    from cowp_ros.ros.names import CURRENT_STEP_TOPIC, SITUATIONS_TOPIC, WRIST_IMAGE_TOPIC
    from cowp_ros.ros.nodes.vlm_checker import VlmChecker

    context, executor = ros
    overrides = [Parameter("vlm_url", value=server_url), Parameter("settle_s", value=0.05)]
    overrides += [Parameter(k, value=v) for k, v in params.items()]
    checker = VlmChecker(context=context, parameter_overrides=overrides)
    probe = Node("vlm_probe", context=context)
    heard: list[Any] = []
    probe.create_subscription(Situation, SITUATIONS_TOPIC, heard.append, 10)
    steps_out = probe.create_publisher(PlanStep, CURRENT_STEP_TOPIC, 10)
    images = probe.create_publisher(Image, WRIST_IMAGE_TOPIC, qos_profile_sensor_data)
    executor.add_node(checker)
    executor.add_node(probe)
    deadline = time.monotonic() + 10
    while steps_out.get_subscription_count() < 1 or images.get_subscription_count() < 1:
        assert time.monotonic() < deadline, "the node did not subscribe"
        time.sleep(0.05)
    for index, (action, arguments) in enumerate(steps, start=1):
        steps_out.publish(PlanStep(action=action, arguments=arguments))
        deadline = time.monotonic() + 15
        frame = 0
        while checker.steps_checked < index:  # a camera streaming until the step is asked
            assert time.monotonic() < deadline, f"step {index} was not checked"
            frame += 1
            images.publish(image_msg(frame))
            time.sleep(0.05)
    deadline = time.monotonic() + 10
    while len(heard) < expect:  # what the node published reaches the probe
        assert time.monotonic() < deadline, f"heard {len(heard)} of {expect} situations"
        time.sleep(0.05)
    return checker, heard


def test_a_defect_the_model_sees_is_a_situation_said_once(ros) -> None:
    model = VisionModel(yes=r"cup dirty")
    with ScriptedLLMServer(model, models=["scripted-vlm"]) as server:
        checker, heard = run_steps(
            ros, server.url, [("find_cup", ["cup_1"]), ("grasp_cup", ["cup_1"])], expect=1
        )
    assert checker.published == ["the cup is dirty"]  # seen at both steps, said once
    assert [(s.text, s.object, s.source) for s in heard] == [
        ("the cup is dirty", "cup_1", "vlm_checker")
    ]
    assert heard[0].confidence == pytest.approx(0.8)
    assert model.images == 2  # one image a step, with every question of the step
    assert model.asked[0] == [
        "Is the cup dirty or stained?",
        "Is the cup cracked?",
        "Is the cup chipped at its edge?",
    ]


def test_with_the_task_named_a_precondition_the_image_contradicts_is_said(ros) -> None:
    model = VisionModel(yes=r"^$")  # no to everything: no defect, no water running
    with ScriptedLLMServer(model, models=["scripted-vlm"]) as server:
        checker, _ = run_steps(
            ros, server.url, [("fill_water", ["cup_1", "faucet_1"])], expect=1, task="serve_water"
        )
    asked = model.asked[0]
    assert "Is the faucet cracked?" in asked  # both objects' defects
    preconditions = asked[6:]
    assert preconditions, "the step's preconditions were not asked"
    texts = checker.published
    assert texts and all(t.endswith("The wrist camera shows no.") for t in texts)
    assert all(t.split(" The wrist")[0] in preconditions for t in texts)


def test_without_a_vision_server_the_node_says_what_to_set(ros) -> None:
    from cowp_ros.ros.nodes.vlm_checker import VlmChecker

    context, _ = ros
    with pytest.raises(CowpError) as raised:
        VlmChecker(context=context)
    assert "vision-language model server" in str(raised.value)
    assert "vlm_url" in (raised.value.hint or "")
