"""`cowp bag info` and what `cowp replay` leaves out, on bags written here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cowp_ros.ros.bags import typestore, write_bag

pytestmark = [pytest.mark.ros]

COWP = Path(sys.executable).with_name("cowp")
START_NS = 1_800_000_000 * 1_000_000_000


def run_bag(tmp_path: Path) -> Path:
    """Half a second of a run: the robot's joints, a situation, the step, the outcome."""
    store = typestore(packages=("cowp_interfaces", "sensor_msgs"))
    situation = store.types["cowp_interfaces/msg/Situation"]
    header = store.types["std_msgs/msg/Header"]
    stamp = store.types["builtin_interfaces/msg/Time"](sec=1_800_000_000, nanosec=0)
    joints = store.types["sensor_msgs/msg/JointState"](
        header=header(stamp=stamp, frame_id=""),
        name=["finger"],
        position=np.zeros(1),
        velocity=np.zeros(1),
        effort=np.zeros(1),
    )
    messages = [
        ("/joint_states", "sensor_msgs/msg/JointState", START_NS + n * 100_000_000, joints)
        for n in range(6)
    ]
    messages.append(
        (
            "/cowp/situations",
            "cowp_interfaces/msg/Situation",
            START_NS + 200_000_000,
            situation(
                header=header(stamp=stamp, frame_id=""),
                text="the cup is dirty",
                object="cup_1",
                source="operator",
                confidence=1.0,
            ),
        )
    )
    messages.sort(key=lambda m: m[2])
    return write_bag(tmp_path / "bag", messages, store)


def cowp(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COWP), *arguments], capture_output=True, text=True, timeout=120, check=False
    )


def test_bag_info_prints_topics_types_counts_and_duration(tmp_path: Path) -> None:
    result = cowp("bag", "info", str(run_bag(tmp_path)))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("(sqlite3), 2 topic(s), 7 message(s)")
    assert lines[1].startswith("duration: 0.500 s (2027-01-15 08:00:00.000 to")
    rows = {line.split()[0]: line.split()[1:3] for line in lines[2:]}
    assert rows == {
        "/cowp/situations": ["cowp_interfaces/msg/Situation", "1"],
        "/joint_states": ["sensor_msgs/msg/JointState", "6"],
    }


def test_bag_info_on_no_bag_says_what_to_give(tmp_path: Path) -> None:
    result = cowp("bag", "info", str(tmp_path))
    assert result.returncode == 1
    assert f"no rosbag2 bag at {tmp_path}" in result.stderr
    assert "metadata.yaml" in result.stderr and "Traceback" not in result.stderr


def test_replay_leaves_out_what_the_live_graph_makes(tmp_path: Path) -> None:
    """The robot's joint states in a bag would fight the live robot's: a replay sends
    the run's inputs only, unless told otherwise."""
    result = cowp("replay", str(run_bag(tmp_path)), "--wait-subscribers", "0.1", "--rate", "10")
    assert result.returncode == 0, result.stderr
    assert "not replayed, the live graph makes them: /joint_states" in result.stdout
    assert "published 1 message(s)" in result.stdout
    named = cowp(
        "replay", str(tmp_path / "bag"), "--topics", "/joint_states", "--wait-subscribers", "0.1"
    )
    assert named.returncode == 0, named.stderr
    assert "published 6 message(s)" in named.stdout


def test_a_bag_is_cut_into_the_steps_it_was_recorded_during(tmp_path: Path) -> None:
    from cowp_ros.ros.step_replay import step_segments

    store = typestore(packages=("cowp_interfaces", "sensor_msgs"))
    plan_step = store.types["cowp_interfaces/msg/PlanStep"]
    situation = store.types["cowp_interfaces/msg/Situation"]
    header = store.types["std_msgs/msg/Header"]
    stamp = store.types["builtin_interfaces/msg/Time"](sec=1_800_000_000, nanosec=0)

    def said(text: str, at_ms: int) -> tuple[str, str, int, object]:
        message = situation(
            header=header(stamp=stamp, frame_id=""),
            text=text,
            object="",
            source="operator",
            confidence=1.0,
        )
        return ("/cowp/situations", "cowp_interfaces/msg/Situation", START_NS + at_ms, message)

    def step(action: str, argument: str, at_ms: int) -> tuple[str, str, int, object]:
        message = plan_step(action=action, arguments=[argument])
        return ("/cowp/current_step", "cowp_interfaces/msg/PlanStep", START_NS + at_ms, message)

    bag = write_bag(
        tmp_path / "bag",
        [
            said("before the run", 0),
            step("find_cup", "cup_1", 10),
            said("the cup is dirty", 20),
            said("still dirty", 30),
            step("find_cup", "mug_1", 40),
            step("grasp_cup", "mug_1", 50),
            said("the mug is fine", 60),
        ],
        store,
    )
    segments = step_segments(bag, None)
    assert [
        (s.step, [store.deserialize_cdr(r.rawdata, r.msgtype).text for r in s.records])
        for s in segments
    ] == [
        ("find_cup(cup_1)", ["the cup is dirty", "still dirty"]),
        ("find_cup(mug_1)", []),
        ("grasp_cup(mug_1)", ["the mug is fine"]),
    ]
    assert [len(s.records) for s in step_segments(bag, ["/wrist_camera/image_raw"])] == [0, 0, 0]


def test_following_steps_needs_a_bag_with_steps(tmp_path: Path) -> None:
    result = cowp("replay", str(run_bag(tmp_path)), "--follow-steps")
    assert result.returncode == 1
    assert "has no /cowp/current_step: nothing to follow" in result.stderr
    assert "Traceback" not in result.stderr
