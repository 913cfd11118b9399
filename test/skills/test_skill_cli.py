"""`cowp skill`: one skill alone, dry-run through the real skill map and runner, or run
through a real executor node (sim-topic fakes stand in for the robot)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from rclpy.parameter import Parameter
from ros_fakes import RosHarness
from test_executor_node import robot_yaml, start_robot

from cowp_ros.cli import main
from cowp_ros.errors import CowpError
from cowp_ros.ros.clients.skill_client import run_step_on_executor
from cowp_ros.ros.executors import NODE_THREADS
from cowp_ros.ros.nodes.executor import SkillExecutor
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.skill_map import SkillMap


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["skill", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_skill_called_by_its_roles_binds_them_directly(skill_map: SkillMap) -> None:
    call = skill_map.resolve("place", ["object=cup_1", "location=table_1"])
    assert call.skill.name == "place" and call.matched_by == "skill called directly"
    assert call.roles == {"object": "cup_1", "location": "table_1"}
    # A PDDL action of the same verb still goes through the action table.
    assert skill_map.resolve("walk", ["table_1"]).matched_by == "action"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["location=table_1"], "skill 'place' needs object"),
        (["object=cup_1", "location=table_1", "speed=fast"], "skill 'place' has no role speed"),
        (["object=", "location=table_1"], "'object=' is not ROLE=VALUE"),
    ],
)
def test_a_skill_call_with_wrong_roles_says_which(
    skill_map: SkillMap, arguments: list[str], message: str
) -> None:
    with pytest.raises(CowpError, match=message):
        skill_map.resolve("place", arguments)


def test_dry_run_prints_the_calibrated_values_and_moves_nothing(
    capsys: pytest.CaptureFixture[str], robot: RobotConfig
) -> None:
    code, out, _ = run_cli(capsys, "pick", "object=cup_1")
    assert code == 0
    counter = robot.base.locations["counter"]
    assert f"drive to counter at x {counter.x:.2f} m, y {counter.y:.2f} m" in out
    grasp = robot.arm.poses["grasp"]
    assert f"move to pose 'grasp' (ur_shoulder_pan_joint {grasp[0]:+.3f}" in out
    assert "a grasp only if the fingers stop above 2.0 mm" in out
    lines = [line for line in out.splitlines() if line.strip()[:2].rstrip(".").isdigit()]
    # carry (before the drive), navigate, open, pre_grasp, grasp, close, pre_grasp,
    # the grasp's check, carry
    assert len(lines) == 9
    assert "move to pose 'carry'" in lines[0] and "drive to counter" in lines[1]
    assert "nothing moved" in out


def test_dry_run_of_a_pddl_action_already_at_its_location_skips_the_drive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "fill_water", "cup_1", "faucet_1", "--at", "sink")
    assert code == 0 and "skill 'fill' (action)" in out
    assert "base:" not in out and "move to pose 'fill'" in out


def test_dry_run_names_an_unknown_object_and_the_files_to_edit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "pick", "object=teapot_1")
    assert code == 1
    assert "no location known for 'teapot_1'" in err and "skills.yaml" in err


def test_list_shows_every_skill_with_its_roles(
    capsys: pytest.CaptureFixture[str], skill_map: SkillMap
) -> None:
    code, out, _ = run_cli(capsys, "--list")
    assert code == 0
    for name, skill in skill_map.skills.items():
        assert f"{name} {' '.join(f'{r}=...' for r in sorted(skill.roles))}".strip() in out


def test_run_without_an_executor_says_how_to_start_one(capsys: pytest.CaptureFixture[str]) -> None:
    action = f"/nobody_{time.monotonic_ns()}/execute_skill"
    code, _, err = run_cli(
        capsys, "navigate", "location=table", "--run", "--action", action, "--server-timeout", "0.5"
    )
    assert code == 1 and action in err and "cowp bringup --profile robot" in err


def test_ctrl_c_while_waiting_for_the_executor_stops_at_once() -> None:
    # the command's Ctrl-C handler cancels rather than raising: the wait for the server
    # must watch that cancel too, or Ctrl-C does nothing until the wait runs out
    action = f"/nobody_{time.monotonic_ns()}/execute_skill"
    ours = signal.getsignal(signal.SIGINT)
    called = threading.Event()

    def ctrl_c_once_the_command_handles_it() -> None:
        # Never before the command's handler is in: a SIGINT to pytest's own handler
        # would end the whole test session. Never handled: the wait runs out and fails.
        deadline = time.monotonic() + 30.0
        while signal.getsignal(signal.SIGINT) is ours and not called.wait(0.01):
            if time.monotonic() > deadline:
                return
        if not called.wait(0.3):  # into the wait for the executor
            os.kill(os.getpid(), signal.SIGINT)

    started = time.monotonic()
    interrupter = threading.Thread(target=ctrl_c_once_the_command_handles_it, daemon=True)
    interrupter.start()
    try:
        ok, message = run_step_on_executor(
            action, "navigate", ["table"], server_timeout_s=60.0, step_timeout_s=5.0, say=print
        )
    finally:
        called.set()
        interrupter.join()
    assert not ok and message == f"canceled while waiting for {action}"
    assert time.monotonic() - started < 30.0


def test_ctrl_c_while_the_node_starts_cancels_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # Starting a node can take a second on a busy machine; a Ctrl-C then is the user's
    # too, and must cancel like any other, not end the command with a traceback.
    from cowp_ros.ros import own_node

    ours = signal.getsignal(signal.SIGINT)
    make_node = own_node.Node

    def ctrl_c_while_starting(*args: object, **kwargs: object) -> object:
        assert signal.getsignal(signal.SIGINT) is not ours, "Ctrl-C is not handled yet"
        os.kill(os.getpid(), signal.SIGINT)
        return make_node(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(own_node, "Node", ctrl_c_while_starting)
    action = f"/nobody_{time.monotonic_ns()}/execute_skill"
    ok, message = run_step_on_executor(
        action, "navigate", ["table"], server_timeout_s=60.0, step_timeout_s=5.0, say=print
    )
    assert not ok and message == f"canceled while waiting for {action}"
    assert signal.getsignal(signal.SIGINT) is ours


@pytest.fixture
def fakes(harness: RosHarness) -> Iterator[list]:
    started: list = []
    yield started
    for node in started:
        harness.remove(node)


@pytest.mark.ros
def test_run_executes_the_skill_on_the_executor_and_prints_its_feedback(
    harness: RosHarness, fakes: list, robot: RobotConfig, tmp_path, capsys
) -> None:
    start_robot(harness, fakes, robot)
    namespace = f"/skill{time.monotonic_ns()}"
    executor = harness.add(
        SkillExecutor(
            context=harness.context,
            namespace=namespace,
            parameter_overrides=[Parameter("robot_config", value=str(robot_yaml(tmp_path)))],
        ),
        threads=NODE_THREADS,  # as it runs: its action callback waits on its subscriptions
    )
    try:
        code, out, err = run_cli(
            capsys, "pick", "object=cup_1", "--run", "--action", f"{namespace}/execute_skill"
        )
        assert code == 0, err
        assert "grasping cup_1" in out and "done: pick(object=cup_1) done" in out
        assert executor.world.holding == "cup_1"
    finally:
        harness.remove(executor)


@pytest.mark.ros
def test_run_reports_a_failed_grasp_with_exit_code_1(
    harness: RosHarness, fakes: list, robot: RobotConfig, tmp_path, capsys
) -> None:
    start_robot(harness, fakes, robot)
    for node in fakes:
        if hasattr(node, "object_at"):
            node.object_at = None  # nothing between the fingers
    namespace = f"/skill{time.monotonic_ns()}"
    executor = harness.add(
        SkillExecutor(
            context=harness.context,
            namespace=namespace,
            parameter_overrides=[Parameter("robot_config", value=str(robot_yaml(tmp_path)))],
        ),
        threads=NODE_THREADS,  # as it runs: its action callback waits on its subscriptions
    )
    try:
        code, out, _ = run_cli(
            capsys, "grasp_cup", "cup_1", "--run", "--action", f"{namespace}/execute_skill"
        )
        assert code == 1 and "failed: " in out and "grasp failed" in out
    finally:
        harness.remove(executor)


@pytest.mark.ros
def test_the_action_client_is_whole_before_its_node_spins(monkeypatch: pytest.MonkeyPatch) -> None:
    """rclpy's ActionClient adds itself to its node before it is whole (its lock is made
    last). A node already spinning in another thread reads it half-made there, and that
    thread dies: the executor's answers are then never taken in, and the step "fails"
    though the robot did it. Widening that moment shows whether the client is made
    before the spinning starts."""
    from rclpy.node import Node

    add_waitable = Node.add_waitable

    def slow_add(self: Node, waitable: object) -> None:
        add_waitable(self, waitable)  # type: ignore[arg-type]
        time.sleep(0.5)

    monkeypatch.setattr(Node, "add_waitable", slow_add)
    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    with pytest.raises(CowpError, match="no executor serves"):
        run_step_on_executor(
            f"/nobody{time.monotonic_ns()}/execute_skill",
            "pick",
            ["object=cup_1"],
            server_timeout_s=1.0,
            step_timeout_s=1.0,
            say=lambda line: None,
        )
    assert died == []
