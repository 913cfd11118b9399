"""An outside check in CI: public IPC problems, written by nobody on this team, planned
as `cowp plan` plans them and compared with Fast Downward's own result.

The problems come from the `pddl` package's source distribution (its tests keep IPC
domains), unpacked by `make setup` (scripts/setup.d/ipc_benchmarks.sh). The kept,
larger figure is benchmarks/bench_ipc.py's (benchmarks/results/ipc/).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cowp_ros.cli import main
from cowp_ros.pddl import PddlLoadError, PlanningTask
from cowp_ros.planning import make_planner
from cowp_ros.planning.fast_downward import (
    ANSWERS,
    FastDownwardPlanner,
    driver_path,
    is_available,
)
from cowp_ros.planning.replay import replay

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_ipc import first_problem, pddl_package_root

ROOT = pddl_package_root()
pytestmark = [
    pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed"),
    pytest.mark.skipif(
        not ROOT.is_dir(), reason=f"{ROOT} missing: make setup unpacks the IPC problems"
    ),
]


def fast_downward_alone(domain: Path, problem: Path) -> list[str]:
    """The plan `fast-downward.py --alias lama-first` finds, as its users run it."""
    driver = driver_path()
    assert driver is not None
    with tempfile.TemporaryDirectory(prefix="cowp_test_fd_") as tmp:
        plan = Path(tmp) / "plan"
        command = [sys.executable, str(driver), "--alias", "lama-first"]
        done = subprocess.run(
            [*command, "--plan-file", str(plan), str(domain), str(problem)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:]
        return [line for line in plan.read_text().splitlines() if line.startswith("(")]


@pytest.mark.parametrize(
    "folder",
    [
        "childsnack",  # negative preconditions, constants
        "storage",  # a type under two parents, `either`, `object` as a parent
        "barman-sequential-optimal",  # action costs
        "sokoban-sequential-optimal",  # action costs, a larger search
    ],
)
def test_an_ipc_problem_plans_as_fast_downward_plans_it(folder: str) -> None:
    domain, problem = first_problem(ROOT / folder)
    task = PlanningTask.load(domain, problem)
    result = make_planner("fast_downward").solve(task, 30.0)
    assert result.found, result.detail
    assert result.planner == "fast_downward"
    # the default (Fast Downward's eager search) plans it too
    assert make_planner().solve(task, 30.0).found
    assert replay(task, result.steps)  # PDDL's semantics agree with the planner's
    theirs = fast_downward_alone(domain, problem)
    assert theirs  # Fast Downward solves it too
    if task.has_action_costs:
        assert isinstance(result.extra["cost"], int) and result.extra["cost"] > 0


def test_derived_predicates_plan_with_fast_downward() -> None:
    domain, problem = first_problem(ROOT / "social-planning")
    result = make_planner().solve(PlanningTask.load(domain, problem), 30.0)
    assert result.found and len(result.steps) == len(fast_downward_alone(domain, problem))


@pytest.mark.parametrize(
    ("folder", "said"),
    [
        ("block-grouping", "line 34: (<= ...) is numeric conditions"),
        ("depots-numeric-automatic", "line 27: (increase (fuel-cost) ...) changes a numeric"),
        ("drone", "line 41: (>= ...) is numeric conditions"),
    ],
)
def test_numeric_planning_is_refused_with_the_construct_and_line(folder: str, said: str) -> None:
    domain, problem = first_problem(ROOT / folder)
    with pytest.raises(PddlLoadError) as refused:
        PlanningTask.load(domain, problem)
    assert said in refused.value.message


def test_cowp_plan_plans_an_ipc_problem_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    domain, problem = first_problem(ROOT / "storage")
    plan = ["plan", "--domain", str(domain), "--problem", str(problem)]
    assert main([*plan, "--planner", "fd"]) == 0
    out = capsys.readouterr().out
    assert "plan by fast_downward" in out
    assert "(lift hoist0 crate0" in out


COSTS_DECLARED_AS_FLUENTS = (
    "(define (domain lights) (:requirements :strips :numeric-fluents)\n"
    " (:predicates (on ?x) (off ?x)) (:functions (total-cost))\n"
    " (:action switch :parameters (?x) :precondition (off ?x)\n"
    "  :effect (and (on ?x) (not (off ?x)) (increase (total-cost) 2))))",
    "(define (problem lights1) (:domain lights) (:objects a b)\n"
    " (:init (off a) (off b) (= (total-cost) 0)) (:goal (and (on a) (on b)))\n"
    " (:metric minimize (total-cost)))",
)
"""`:numeric-fluents` declared for action costs alone (as IPC's cave-diving does): Fast
Downward refuses the declaration, the project's reader leaves it out."""


def test_a_text_fast_downward_refuses_is_planned_as_the_library_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cowp plan --domain D --problem P` gives Fast Downward the files' text first
    (`FastDownwardPlanner.start_on_text`); where Fast Downward refuses that text, the
    task is planned again as the `pddl` library writes it back, as before."""
    planner = make_planner()
    assert isinstance(planner, FastDownwardPlanner)
    refused, _ = planner.start_on_text(*COSTS_DECLARED_AS_FLUENTS, 30.0).wait()
    assert refused.returncode not in ANSWERS, refused.stdout
    domain, problem = tmp_path / "domain.pddl", tmp_path / "problem.pddl"
    domain.write_text(COSTS_DECLARED_AS_FLUENTS[0])
    problem.write_text(COSTS_DECLARED_AS_FLUENTS[1])
    assert main(["plan", "--domain", str(domain), "--problem", str(problem)]) == 0
    out = capsys.readouterr().out
    assert "plan by fast_downward" in out and "(2 steps, cost 4)" in out, out


def test_cowp_plan_on_files_gives_the_same_plan_every_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The plan started on the files' text is taken or not by what the text says,
    never by which side finished first: the record repeats."""
    domain, problem = first_problem(ROOT / "childsnack")
    plans = set()
    for _ in range(3):
        assert main(["plan", "--domain", str(domain), "--problem", str(problem)]) == 0
        out = capsys.readouterr().out
        steps = [line.rsplit("(", 1)[1] for line in out.splitlines() if line.startswith("  ")]
        assert steps, out
        plans.add(tuple(steps))
    assert len(plans) == 1
