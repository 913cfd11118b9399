"""The task manager's guards, in process: goal fields bounded, one goal at a time even
when two arrive together, one "aborted:" in the final line, one report file per goal."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import GoalResponse
from rclpy.exceptions import InvalidHandle

from cowp_interfaces.action import RunTask
from cowp_ros.ros.nodes.task_manager import TaskManager

pytestmark = [pytest.mark.ros]


class FakeGoal:
    """The parts of a ServerGoalHandle a run uses, recorded."""

    def __init__(self, task: str) -> None:
        self.request = RunTask.Goal(task=task)
        self.goal_id = SimpleNamespace(uuid=list(uuid.uuid4().bytes))
        self.is_cancel_requested = False
        self.feedback: list[Any] = []
        self.ended = ""

    def publish_feedback(self, message: Any) -> None:
        self.feedback.append(message)

    def abort(self) -> None:
        self.ended = "aborted"

    def succeed(self) -> None:
        self.ended = "succeeded"

    def canceled(self) -> None:
        self.ended = "canceled"

    @property
    def status(self) -> int:
        return {
            "aborted": GoalStatus.STATUS_ABORTED,
            "succeeded": GoalStatus.STATUS_SUCCEEDED,
            "canceled": GoalStatus.STATUS_CANCELED,
        }.get(self.ended, GoalStatus.STATUS_EXECUTING)


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[TaskManager]:
    rclpy.init()
    node = TaskManager()
    node.run_context = dataclasses.replace(node.run_context, report_dir=tmp_path / "reports")
    yield node
    node.destroy_node()
    rclpy.try_shutdown()


def test_a_huge_task_name_is_rejected(manager: TaskManager) -> None:
    """Too large to keep: rejected, and not kept for a result."""
    assert manager.on_goal(RunTask.Goal(task="x" * 10_000_000)) == GoalResponse.REJECT
    assert manager.on_goal(RunTask.Goal(task="serve water")) == GoalResponse.ACCEPT


def test_a_refused_goal_says_why_in_its_result(manager: TaskManager) -> None:
    """A goal the task manager refuses gets a result that says why (a rejection has
    none: the reason was only in the log)."""
    assert manager.on_goal(RunTask.Goal(task="serve\x1b[2J water")) == GoalResponse.ACCEPT
    goal = FakeGoal("serve\x1b[2J water")
    published: list[tuple[int, str]] = []
    manager.outcomes.publish = lambda g, r: published.append((g.status, r.explanation))  # type: ignore[method-assign]
    result = manager.execute(goal)
    assert goal.ended == "aborted" and not result.success
    assert result.explanation == (
        "aborted: the goal's task holds control characters: name a task (serve_water)"
    )
    assert published == [(GoalStatus.STATUS_ABORTED, result.explanation)]
    assert not manager._busy.locked()  # the next goal is not refused as busy


def test_a_second_goal_that_slipped_past_the_check_ends_at_once(manager: TaskManager) -> None:
    """Both goals passed on_goal before either ran: the second must not wait for the
    first (it ends aborted, saying why)."""
    manager._busy.acquire()  # the first goal is running
    goal = FakeGoal("serve_water")
    published: list[tuple[int, str]] = []
    manager.outcomes.publish = lambda g, r: published.append((g.status, r.outcome))  # type: ignore[method-assign]
    results: list[Any] = []
    second = threading.Thread(target=lambda: results.append(manager.execute(goal)), daemon=True)
    second.start()
    second.join(3.0)
    blocked = second.is_alive()
    manager._busy.release()
    assert not blocked, "the second goal waited for the first"
    assert goal.ended == "aborted" and "already running" in results[0].explanation
    assert published == [(GoalStatus.STATUS_ABORTED, "aborted")]  # for a TaskClient too


def test_the_final_line_says_aborted_once(manager: TaskManager) -> None:
    goal = FakeGoal("make_coffee")
    result = manager.execute(goal)
    assert result.outcome == "aborted" and result.explanation.startswith("aborted: ")
    last = goal.feedback[-1].last_event
    assert last.startswith("aborted: ") and not last.startswith("aborted: aborted")


def test_quick_goals_get_a_report_each(manager: TaskManager) -> None:
    paths = {manager.execute(FakeGoal("make_coffee")).report_path for _ in range(6)}
    assert len(paths) == 6 and all(paths)
    assert len(list(manager.run_context.report_dir.glob("*.json"))) == 6
    for path in paths:
        assert json.loads(Path(path).read_text())["outcome"] == "aborted"


def test_reports_go_where_cowp_run_puts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no report_dir of its own, the task manager writes to $COWP_REPORTS_DIR, as
    `cowp run` does."""
    monkeypatch.setenv("COWP_REPORTS_DIR", str(tmp_path / "session"))
    rclpy.init()
    node = TaskManager()
    try:
        path = Path(node.execute(FakeGoal("make_coffee")).report_path)
        assert path.parent == (tmp_path / "session").resolve()
        assert json.loads(path.read_text())["outcome"] == "aborted"
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def test_the_task_manager_and_cowp_run_write_one_schema(
    manager: TaskManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """One reader reads both reports: the common fields, the events, and each one's
    own section (the task manager's `graph`)."""
    from cowp_ros.cli import main
    from cowp_ros.cli import run as run_cli
    from cowp_ros.cowp.report import REPORT_KEYS, read_report
    from cowp_ros.llm.scripted import ScriptedModel

    model = ScriptedModel(yes_no=[("if ", True)], default_yes_no=True)

    @contextlib.contextmanager
    def fake_open_model(args: Any) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    cli_path = tmp_path / "cli.json"
    main(["run", "fill_cup", "--situation", "a radio plays", "--report", str(cli_path)])
    capsys.readouterr()
    from_cli = read_report(cli_path)
    from_graph = read_report(manager.execute(FakeGoal("make_coffee")).report_path)
    assert from_cli.outcome == "completed" and from_cli.events_of("plan")
    assert from_cli.model == "scripted" and from_cli.usage["calls"] == len(model.log) > 0
    assert from_graph.outcome == "aborted" and "make_coffee" in from_graph.explanation
    assert set(from_graph.sections) == {"graph"} and not from_cli.sections
    assert from_graph.sections["graph"]["goal"] == "make_coffee"
    for report in (from_cli, from_graph):
        assert all(isinstance(getattr(report, key), str | dict) for key in REPORT_KEYS)


def test_its_action_server_and_skill_client_go_with_the_node(manager: TaskManager) -> None:
    """rclpy's destroy_node leaves them to the garbage collector, which may run them down
    on any thread while DDS threads hold their locks; the node destroys them itself."""
    assert {id(manager.server), id(manager.skill_client)} <= {id(w) for w in manager.waitables}
    manager.destroy_node()
    assert not {id(manager.server), id(manager.skill_client)} & {id(w) for w in manager.waitables}
    for handle in (manager.server._handle, manager.skill_client._client_handle):
        with pytest.raises(InvalidHandle), handle:
            pass
