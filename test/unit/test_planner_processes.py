"""Planner workers never outlive the process that asked for the plan.

The planners run in their own session (so a deadline can kill the whole group). Without
more, a parent killed mid-plan left the worker searching at full CPU and its
/tmp/cowp_pyperplan_* folder behind, and `cowp plan` under Ctrl-C waited for it. Each
test marks its processes (`cowp_ros.chaos.processes`) and gives them a private TMPDIR,
so that what is left afterwards is found exactly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cowp_ros.chaos import processes
from cowp_ros.chaos.runner import RUN_CLI  # Ctrl-C works even from a background pytest
from cowp_ros.chaos.workspace import SLOW_TASK, write_slow_registry
from cowp_ros.planning.fast_downward import is_available
from cowp_ros.planning.lifeline import MODULE, STDIN, THEN
from cowp_ros.planning.process import guarded, run_with_deadline

SOLVE = """
import sys
from cowp_ros.planning import make_planner
from cowp_ros.tasks import get_task
make_planner(sys.argv[1]).solve(get_task("slow_pigeons").load(), 300)
"""
WORKER_OF = {"pyperplan": "pyperplan_worker", "fast_downward": "downward"}


def _start(tmp_path: Path, args: list[str]) -> tuple[subprocess.Popen[bytes], str, Path]:
    mark = uuid.uuid4().hex
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = {
        **os.environ,
        processes.MARK_ENV: mark,
        "TMPDIR": str(private_tmp),
        "COWP_PDDL_DIR": str(write_slow_registry(tmp_path / "tasks")),
    }
    child = subprocess.Popen(
        [sys.executable, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    return child, mark, private_tmp


def _nothing_left(mark: str, private_tmp: Path) -> None:
    left = processes.wait_until_gone(mark, 10.0)
    processes.kill_all(mark)
    assert not left, f"left running: {left}"
    deadline = time.monotonic() + 5
    while any(private_tmp.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(private_tmp.iterdir()), "temporary folders left behind"


@pytest.mark.parametrize("planner", ["pyperplan", "fast_downward"])
def test_a_killed_parent_takes_its_planner_along(tmp_path: Path, planner: str) -> None:
    if planner == "fast_downward" and not is_available():
        pytest.skip("up-fast-downward is not installed")
    parent, mark, private_tmp = _start(tmp_path, ["-c", SOLVE, planner])
    try:
        worker = processes.wait_for(mark, WORKER_OF[planner], 60.0)
        assert worker is not None, "the planner did not start"
        time.sleep(0.5)  # well into the search
        parent.kill()
        parent.wait(timeout=10)
        _nothing_left(mark, private_tmp)
    finally:
        parent.kill()
        processes.kill_all(mark)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_cowp_plan_stopped_mid_plan_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    cli, mark, private_tmp = _start(
        tmp_path, ["-c", RUN_CLI, "plan", SLOW_TASK, "--planner", "pyperplan", "--timeout", "300"]
    )
    try:
        assert processes.wait_for(mark, "pyperplan_worker", 60.0) is not None
        time.sleep(0.5)
        cli.send_signal(sig)
        started = time.monotonic()
        _, err = cli.communicate(timeout=20)
        assert time.monotonic() - started < 5, "the command waited for its planner"
        assert cli.returncode == code, err.decode()
        assert b"Traceback" not in err
        _nothing_left(mark, private_tmp)
    finally:
        cli.kill()
        processes.kill_all(mark)


def test_the_deadline_still_stops_the_search(tmp_path: Path) -> None:
    cli, mark, private_tmp = _start(
        tmp_path, ["-c", RUN_CLI, "plan", SLOW_TASK, "--planner", "pyperplan", "--timeout", "1"]
    )
    out, err = cli.communicate(timeout=60)
    assert cli.returncode == 1 and b"no plan (timeout)" in out, err.decode()
    _nothing_left(mark, private_tmp)


def test_an_interrupt_taken_by_another_thread_still_stops_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process-directed Ctrl-C may land on any thread (numpy's BLAS pool in `cowp`);
    Python then raises it in the main thread only when that thread runs again, so a
    wait for the planner that blocked until the deadline would hold the command until
    then. The signal is sent to another thread here, which a kill() rarely does."""
    import threading

    from cowp_ros.planning.process import run_with_deadline

    folder = tmp_path / "cowp_interrupted"
    folder.mkdir()
    mark = uuid.uuid4().hex
    monkeypatch.setenv(processes.MARK_ENV, mark)  # children only: /proc shows our start env
    # As in a terminal: a pytest started in the background inherits SIGINT ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        to_other_thread = threading.Timer(
            0.5, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        )
        to_other_thread.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_with_deadline([sys.executable, "-c", "import time; time.sleep(30)"], 20.0, folder)
        assert time.monotonic() - started < 3, "the wait outlived the interrupt"
        assert not processes.wait_until_gone(mark, 10.0), "the planner outlived the interrupt"
    finally:
        signal.signal(signal.SIGINT, previous)
        processes.kill_all(mark)


def test_a_module_step_runs_in_the_guard_with_its_input_exit_code_and_hash_seed(
    tmp_path: Path,
) -> None:
    """`--module NAME` runs as `python -m NAME` would, in a fork of the lifeline guard
    (Fast Downward's translator: one interpreter start fewer), with PYTHONHASHSEED=0 so
    that what it writes is the same on every run."""
    (tmp_path / "probe.py").write_text(
        "import sys\nfed = sys.stdin.read().strip() if sys.argv[2:] else ''\n"
        "print(hash('cowp'), fed)\nsys.exit(int(sys.argv[1]))\n"
    )
    (tmp_path / "input.txt").write_text("fed\n")
    fed = str(tmp_path / "input.txt")
    steps = [MODULE, "probe", "0", THEN, STDIN, fed, MODULE, "probe", "3", "read"]
    outcome = run_with_deadline(guarded(steps), 30, tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert outcome.returncode == 3, outcome.stderr
    seeded = subprocess.run(
        [sys.executable, "-c", "print(hash('cowp'))"],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    first, second = outcome.stdout.splitlines()
    assert first.split() == [seeded]
    assert second.split() == [seeded, "fed"]


REFUSED_FILES = {
    # one action of 6 parameters over 30 objects, all reachable: the grounding bound
    "grounding": (
        "(define (domain boom) (:requirements :strips :typing) (:types thing)"
        " (:predicates (p ?a - thing) (q ?a - thing ?b - thing) (goal_reached))"
        " (:action blow :parameters (?a - thing ?b - thing ?c - thing ?d - thing"
        " ?e - thing ?f - thing) :precondition (and (p ?a) (p ?b) (p ?c) (p ?d) (p ?e) (p ?f))"
        " :effect (and (q ?a ?b) (q ?c ?d) (q ?e ?f))))",
        "(define (problem boom1) (:domain boom) (:objects "
        + " ".join(f"o{i}" for i in range(30))
        + " - thing) (:init "
        + " ".join(f"(p o{i})" for i in range(30))
        + ") (:goal (goal_reached)))",
        "729,000,000 actions",
    ),
    # numeric planning: Fast Downward refuses it too, the parser names the line
    "numeric": (
        "(define (domain tank) (:requirements :strips :numeric-fluents)\n"
        " (:predicates (full)) (:functions (level))\n"
        " (:action fill :parameters () :precondition (< (level) 10)\n"
        "  :effect (full)))",
        "(define (problem tank1) (:domain tank) (:init (= (level) 0)) (:goal (full)))",
        "line 3: (< ...) is numeric conditions",
    ),
}


@pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed")
@pytest.mark.parametrize("case", sorted(REFUSED_FILES))
def test_a_refused_file_task_stops_the_planner_started_on_its_text(
    tmp_path: Path, case: str
) -> None:
    """`cowp plan --domain D --problem P` starts Fast Downward on the files before it
    parses and checks them (`cli/plan.py`); a task the checks refuse is refused as
    ever, and the planner started on it is stopped, its folder removed."""
    domain_text, problem_text, said = REFUSED_FILES[case]
    (tmp_path / "domain.pddl").write_text(domain_text)
    (tmp_path / "problem.pddl").write_text(problem_text)
    files = ["--domain", str(tmp_path / "domain.pddl"), "--problem", str(tmp_path / "problem.pddl")]
    cli, mark, private_tmp = _start(tmp_path, ["-c", RUN_CLI, "plan", *files])
    try:
        out, err = cli.communicate(timeout=60)
        assert cli.returncode != 0, out.decode()
        assert said in err.decode(), err.decode()
        assert b"Traceback" not in err
        _nothing_left(mark, private_tmp)
    finally:
        cli.kill()
        processes.kill_all(mark)
