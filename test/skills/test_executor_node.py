"""The executor node over real ROS: an in-process ExecuteSkill client against it.

The node runs in the test's context on a MultiThreadedExecutor (as in main()), with
the topic backends talking to the fakes of ros_fakes.py. Each test gets its own
namespace so that action servers of earlier tests, still in the graph for a moment,
are never mistaken for this one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient, ActionServer
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from rclpy.parameter import Parameter
from ros_fakes import FakeArmController, FakeHandE, FakeOdomBase, RosHarness

from cowp_interfaces.action import ExecuteSkill
from cowp_interfaces.msg import PlanStep
from cowp_ros.errors import CowpError
from cowp_ros.ros.executors import NODE_THREADS
from cowp_ros.ros.nodes.executor import CURRENT_STEP_TOPIC, SkillExecutor

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]


def robot_yaml(tmp_path: Path, *, unserved_base: bool = False) -> Path:
    """config/robot.yaml with a quick arm (and, if asked, a goal topic nobody serves)."""
    data = yaml.safe_load((ROOT / "config" / "robot.yaml").read_text())
    data["arm"]["max_joint_velocity_rad_s"] = 8.0
    data["arm"]["min_move_duration_s"] = 0.2
    if unserved_base:
        data["base"]["goal_topic"] = f"/unserved_{time.monotonic_ns()}/goal_pose"
        data["arm"]["carry_pose"] = ""  # drive at once: the base alone is under test
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class Session:
    """An executor node, a client for it, and what it published, in one namespace."""

    def __init__(self, harness: RosHarness, robot_config: Path, **parameters: Any) -> None:
        self.harness = harness
        namespace = f"/t{time.monotonic_ns()}"
        overrides = [
            Parameter("robot_config", value=str(robot_config)),
            Parameter("topic_timeout_s", value=5.0),
            *(Parameter(k, value=v) for k, v in parameters.items()),
        ]
        self.node = harness.add(
            SkillExecutor(
                context=harness.context, namespace=namespace, parameter_overrides=overrides
            ),
            threads=NODE_THREADS,  # as it runs: its action callback waits on its subscriptions
        )
        # The client is made before its node spins (rclpy's ActionClient joins the node
        # before it is whole: a spinning thread that meets it half-made dies).
        self.client_node = Node(f"client_{time.monotonic_ns()}", context=harness.context)
        self.steps: list[PlanStep] = []
        self.client_node.create_subscription(PlanStep, CURRENT_STEP_TOPIC, self.steps.append, 10)
        self.action = ActionClient(self.client_node, ExecuteSkill, f"{namespace}/execute_skill")
        harness.add(self.client_node)
        self.feedback: list[ExecuteSkill.Feedback] = []
        assert self.action.wait_for_server(timeout_sec=10.0), "execute_skill not discovered"

    def wait(self, future: Any, timeout_s: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert future.done(), f"no answer within {timeout_s} s"
        return future.result()

    def wait_until(self, condition: Any, what: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert condition(), f"no {what} within {timeout_s} s"

    def send(self, action: str, *arguments: str) -> Any:
        goal = ExecuteSkill.Goal(step=PlanStep(action=action, arguments=list(arguments)))
        handle = self.wait(
            self.action.send_goal_async(
                goal, feedback_callback=lambda m: self.feedback.append(m.feedback)
            )
        )
        assert handle.accepted
        return handle

    def run(self, action: str, *arguments: str) -> tuple[int, ExecuteSkill.Result]:
        wrapped = self.wait(self.send(action, *arguments).get_result_async())
        return wrapped.status, wrapped.result

    def close(self) -> None:
        self.action.destroy()
        self.harness.remove(self.client_node)
        self.harness.remove(self.node)


@pytest.fixture
def fakes(harness: RosHarness) -> Iterator[list]:
    started: list = []
    yield started
    for node in started:
        harness.remove(node)


@pytest.fixture
def session_factory(harness: RosHarness) -> Iterator:
    sessions: list[Session] = []

    def make(robot_config: Path, **parameters: Any) -> Session:
        sessions.append(Session(harness, robot_config, **parameters))
        return sessions[-1]

    yield make
    for session in sessions:
        session.close()


def start_robot(harness: RosHarness, fakes: list, robot, *, base_speed: float = 4.0) -> None:
    for node in (
        FakeOdomBase(harness, goal_topic=robot.base.goal_topic, speed_m_s=base_speed),
        FakeArmController(
            harness,
            joint_names=robot.arm.joint_names,
            start=robot.arm.poses["home"],
            trajectory_topic=robot.arm.trajectory_topic,
        ),
        FakeHandE(
            harness,
            finger_joint=robot.gripper.finger_joint,
            command_topic=robot.gripper.command_topic,
            object_at=0.012,
        ),
    ):
        harness.add(node)
        fakes.append(node)


def test_a_pick_step_succeeds_with_feedback_and_is_announced(
    harness, fakes, session_factory, robot, tmp_path
) -> None:
    start_robot(harness, fakes, robot)
    session = session_factory(robot_yaml(tmp_path))
    status, result = session.run("hold_cup", "cup_1")
    assert status == GoalStatus.STATUS_SUCCEEDED, result.message
    assert result.success and "hold_cup(cup_1) done" in result.message
    statuses = [f.status for f in session.feedback]
    assert "navigating to cup_1" in statuses and "grasping cup_1" in statuses
    progress = [f.progress for f in session.feedback]
    assert progress == sorted(progress) and progress[-1] == pytest.approx(1.0)
    assert [(s.action, list(s.arguments)) for s in session.steps] == [("hold_cup", ["cup_1"])]
    assert session.node.world.holding == "cup_1"


def test_its_action_server_goes_with_the_node(harness, tmp_path) -> None:
    """rclpy's destroy_node leaves action servers and clients to the garbage collector,
    which may run them down on any thread while DDS threads hold their locks; the node
    destroys them itself."""
    node = SkillExecutor(
        context=harness.context,
        namespace=f"/t{time.monotonic_ns()}",
        parameter_overrides=[Parameter("robot_config", value=str(robot_yaml(tmp_path)))],
    )
    made = [w for w in node.waitables if isinstance(w, (ActionServer, ActionClient))]
    assert any(isinstance(w, ActionServer) for w in made)
    node.destroy_node()
    assert not [w for w in node.waitables if w in made]
    for waitable in made:
        handle = waitable._handle if isinstance(waitable, ActionServer) else waitable._client_handle
        with pytest.raises(InvalidHandle), handle:
            pass


def test_an_unmapped_action_fails_naming_it_and_the_config(
    session_factory, robot, tmp_path
) -> None:
    session = session_factory(robot_yaml(tmp_path))
    status, result = session.run("juggle_balls", "ball_1")
    assert status == GoalStatus.STATUS_ABORTED and not result.success
    assert "juggle_balls" in result.message and "skills.yaml" in result.message


@pytest.mark.parametrize(
    ("action", "arguments"), [("x" * 2**20, []), ("walk", ["table_1"] * 40), ("walk", ["y" * 101])]
)
def test_a_step_too_large_is_rejected_and_never_announced(
    session_factory, robot, tmp_path, action: str, arguments: list[str]
) -> None:
    """Any peer can send a step: a 1 MB action name was accepted, logged twice, sent
    back in the result and republished on /cowp/current_step. Rejected, it is not kept
    for a result either."""
    session = session_factory(robot_yaml(tmp_path))
    goal = ExecuteSkill.Goal(step=PlanStep(action=action, arguments=arguments))
    assert not session.wait(session.action.send_goal_async(goal)).accepted
    _only_the_next_step_is_announced(session)


def test_a_step_with_control_characters_ends_saying_why(session_factory, robot, tmp_path) -> None:
    session = session_factory(robot_yaml(tmp_path))
    status, result = session.run("walk", "table\x1b[2J_1")
    assert status == GoalStatus.STATUS_ABORTED and not result.success
    assert result.message == (
        "refused: the step's argument 1 holds control characters: send PDDL names"
    )
    _only_the_next_step_is_announced(session)


def _only_the_next_step_is_announced(session: Session) -> None:
    """A step within the bounds is announced: in order, after anything announced before."""
    session.run("juggle_balls", "ball_1")
    session.wait_until(lambda: session.steps, "the announcement of juggle_balls")
    assert [s.action for s in session.steps] == ["juggle_balls"]


def test_a_missing_server_fails_naming_the_topic(session_factory, robot, tmp_path) -> None:
    config = robot_yaml(tmp_path, unserved_base=True)
    session = session_factory(config, server_timeout_s=1.0)
    t0 = time.monotonic()
    status, result = session.run("walk", "table_1")
    assert status == GoalStatus.STATUS_ABORTED and not result.success
    goal_topic = yaml.safe_load(config.read_text())["base"]["goal_topic"]
    assert goal_topic in result.message and "walk(table_1)" in result.message
    assert time.monotonic() - t0 < 10.0


def test_cancel_mid_drive_ends_canceled(harness, fakes, session_factory, robot, tmp_path) -> None:
    start_robot(harness, fakes, robot, base_speed=0.3)
    session = session_factory(robot_yaml(tmp_path))
    handle = session.send("walk_table", "table_1", "room_1")
    deadline = time.monotonic() + 10
    while not session.feedback and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)
    session.wait(handle.cancel_goal_async())
    wrapped = session.wait(handle.get_result_async())
    assert wrapped.status == GoalStatus.STATUS_CANCELED
    assert not wrapped.result.success and "canceled" in wrapped.result.message


def test_a_bad_parameter_is_named_at_start_up(harness, robot, tmp_path) -> None:
    with pytest.raises(CowpError, match="parameter arm_backend is 'laser'"):
        SkillExecutor(
            context=harness.context,
            namespace=f"/bad{time.monotonic_ns()}",
            parameter_overrides=[
                Parameter("robot_config", value=str(robot_yaml(tmp_path))),
                Parameter("arm_backend", value="laser"),
            ],
        )
