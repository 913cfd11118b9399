"""Every invariant of the harness can fail: each is shown a run that breaks it.

A check that cannot fail proves nothing. These runs are records made by hand (what a
broken `cowp` would leave), plus two real ones: a process that outlives its run, found
by its marker, and a `cowp run` whose report cannot be written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cowp_ros.chaos import processes
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.invariants import INVARIANTS, MAX_RSS_BYTES, check_all
from cowp_ros.chaos.record import Run, Scenario
from cowp_ros.chaos.runner import execute

GOOD_DOMAIN = "(define (domain d) (:requirements :strips) (:predicates (p)) " + (
    "(:action a :parameters () :precondition (and) :effect (p)))"
)
GOOD_PROBLEM = "(define (problem q) (:domain d) (:init) (:goal (p)))"


def healthy(tmp_path: Path) -> Run:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"outcome": "completed", "events": []}))
    (tmp_path / "1-domain.pddl").write_text(GOOD_DOMAIN)
    (tmp_path / "1-problem.pddl").write_text(GOOD_PROBLEM)
    return Run(
        number=1, kind="test", family="llm", seed="0:1:test", command=["cowp", "run"],
        bound_s=40.0, wall_s=3.0, exit_code=0, stdout=b"outcome: completed\n",
        report_expected=True, report_path=report,
        pddl_files=[tmp_path / "1-domain.pddl", tmp_path / "1-problem.pddl"],
        written_files=[report], secrets=("sk-chaos-1234",), canaries=("⟦ЖЖ⟧",),
        peak_rss_bytes=80 * 2**20,
    )  # fmt: skip


def broken(run: Run) -> set[str]:
    return {check.name for check in check_all(run) if not check.ok}


def test_a_healthy_run_keeps_every_invariant(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    assert broken(run) == set() and len(run.checks) == len(INVARIANTS)


def test_a_hung_or_slow_run_breaks_ended_in_time(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.exit_code = None
    assert "ended_in_time" in broken(run)
    run = healthy(tmp_path)
    run.wall_s = 41.0
    assert broken(run) == {"ended_in_time"}


def test_a_traceback_or_odd_exit_breaks_clean_exit(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.stderr = b"Traceback (most recent call last):\n  ...\nOverflowError: math range error\n"
    assert broken(run) == {"clean_exit"}
    run = healthy(tmp_path)
    run.exit_code = -9
    assert broken(run) == {"clean_exit"}


@pytest.mark.parametrize(
    "content",
    [None, '{"outcome": "error", "p_yes": NaN, "events": []}', '{"events": []}', "x" * 3_000_000],
    ids=["missing", "NaN", "no outcome", "huge"],
)
def test_a_bad_report_breaks_strict_report(tmp_path: Path, content: str | None) -> None:
    run = healthy(tmp_path)
    assert run.report_path is not None
    if content is None:
        run.report_path.unlink()
    else:
        run.report_path.write_text(content)
    assert broken(run) == {"strict_report"}


def test_injected_text_in_pddl_breaks_no_injection(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.pddl_files[0].write_text(GOOD_DOMAIN.replace("(p))", "(p))) ; ⟦ЖЖ⟧"))
    assert broken(run) == {"no_injection"}
    run = healthy(tmp_path)
    run.pddl_files[0].write_text(GOOD_DOMAIN[:-3])
    assert broken(run) == {"no_injection"}


def test_a_printed_key_breaks_no_secret(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.stderr = b"error at http://u:sk-chaos-1234@host/v1"
    assert broken(run) == {"no_secret"}
    run = healthy(tmp_path)
    assert run.report_path is not None
    run.report_path.write_text(json.dumps({"outcome": "x", "events": [], "k": "sk-chaos-1234"}))
    assert broken(run) == {"no_secret"}


def test_memory_and_output_bounds(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.peak_rss_bytes = MAX_RSS_BYTES + 1
    assert broken(run) == {"bounded_memory"}
    run = healthy(tmp_path)
    run.stdout = b"\x1b[2Jclear screen"
    assert broken(run) == {"terminal_safe"}
    run = healthy(tmp_path)
    run.stdout = "\u009b31m".encode()  # a C1 escape, UTF-8 encoded
    assert broken(run) == {"terminal_safe"}


def test_a_process_left_behind_is_found_by_its_marker(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    env = {**os.environ, processes.MARK_ENV: mark}
    # a daemon: its own session, its parent gone at once (as an orphaned worker is)
    launcher = subprocess.run(
        [sys.executable, "-c",
         "import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
         "'import time; time.sleep(60)'], start_new_session=True)"],
        env=env, check=True, timeout=30,
    )  # fmt: skip
    assert launcher.returncode == 0
    try:
        left = processes.wait_for(mark, "time.sleep", 10.0)
        assert left is not None and left.rss_bytes > 0
        run = healthy(tmp_path)
        run.leftover_processes = [f"{left.pid}: {left.command}"]
        assert broken(run) == {"nothing_left"}
    finally:
        assert processes.kill_all(mark) >= 1
    assert processes.wait_until_gone(mark, 10.0) == []


def test_a_temporary_folder_left_behind_breaks_nothing_left(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.leftover_files = ["cowp_pyperplan_abc123"]
    assert broken(run) == {"nothing_left"}


def test_a_report_that_cannot_be_written_is_caught_on_a_real_run(tmp_path: Path) -> None:
    scenario = Scenario(
        args=["run", "fill_cup", "--report", "/proc/cannot/write.json", "--llm-url", "{url}",
              "--llm-model", "scripted", "--no-cache"],
        responder=SensibleModel(), timeout_s=5, report=True,
    )  # fmt: skip
    run = execute(
        scenario, tmp_path / "run", number=1, kind="test", family="cli", seed="t",
        secret="sk-chaos-5678", canaries=("⟦ЖЖ⟧",),
    )  # fmt: skip
    assert "strict_report" in broken(run)
    assert b"cannot write the report" in run.stderr


def test_a_graph_run_that_missed_its_expectations_breaks_kept_expectations(
    tmp_path: Path,
) -> None:
    run = healthy(tmp_path)
    run.expect = {"result_arrived": 1.0, "cancel_latency_s": 1.0}
    run.observed = {"result_arrived": 1.0, "cancel_latency_s": 0.2, "outcome": "canceled"}
    assert broken(run) == set()
    for seen in (
        {"result_arrived": 0.0, "cancel_latency_s": 0.2, "outcome": "canceled"},
        {"result_arrived": 1.0, "cancel_latency_s": 2.5, "outcome": "canceled"},
        {"result_arrived": 1.0, "cancel_latency_s": 0.2, "outcome": "completed"},
        {"result_arrived": 1.0},
    ):
        run = healthy(tmp_path)
        run.expect, run.observed = {"result_arrived": 1.0, "cancel_latency_s": 1.0}, seen
        assert broken(run) == {"kept_expectations"}, seen
    run = healthy(tmp_path)
    run.expect, run.observed = {"questions": 120.0}, {"questions": 121}
    assert broken(run) == {"kept_expectations"}


def test_a_graph_run_may_hold_more_memory_when_its_scenario_says(tmp_path: Path) -> None:
    run = healthy(tmp_path)
    run.peak_rss_bytes = 900 * 2**20
    assert "bounded_memory" in broken(run)
    run.max_rss_bytes = 2 * 2**30
    assert "bounded_memory" not in broken(run)


def test_every_invariant_is_exercised_here() -> None:
    tested = {
        "ended_in_time", "clean_exit", "strict_report", "no_injection", "no_secret",
        "nothing_left", "bounded_memory", "terminal_safe", "kept_expectations",
    }  # fmt: skip
    assert set(INVARIANTS) == tested
