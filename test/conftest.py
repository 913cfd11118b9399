"""Test-wide ROS 2 environment: DDS stays on loopback, each run gets its own domain.

Set before anything imports rclpy, and inherited by every node process a test starts,
so parallel test runs (or a developer's running stack) never see each other.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from cowp_ros.pddl import PlanningTask
from cowp_ros.tasks import TaskSpec, get_task

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# An explicit COWP_TEST_ROS_DOMAIN_ID pins the domain (to watch a run with ros2 topic echo).
os.environ["ROS_DOMAIN_ID"] = os.environ.get(
    "COWP_TEST_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100))
)

# The embedded model's shared servers of a test run live in a folder of the run's own
# (not the user's, whose server a developer may be using), and are stopped at its end.
_RUNTIME = tempfile.mkdtemp(prefix="cowp-test-llm-run-")
os.environ["COWP_LLM_RUNTIME_DIR"] = _RUNTIME


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    from cowp_ros.llm.shared_server import stop_servers

    stop_servers(Path(_RUNTIME), grace_s=5.0)
    shutil.rmtree(_RUNTIME, ignore_errors=True)


# ---- small problems and registered tasks (the core and the methods use them) ----------

DOMAIN_TEXT = """
(define (domain tiny)
  (:requirements :strips :typing)
  (:types item place - thing thing - object cup bowl - item table - place)
  (:predicates (found ?x - thing) (holding ?x - item) (hand_free) (served ?t - place))
  (:action find_cup :parameters (?c - cup) :precondition (and) :effect (found ?c))
  (:action hold_cup :parameters (?c - cup)
    :precondition (and (found ?c) (hand_free))
    :effect (and (holding ?c) (not (hand_free))))
  (:action place_cup :parameters (?c - cup ?t - table)
    :precondition (holding ?c)
    :effect (and (served ?t) (hand_free) (not (holding ?c)))))
"""
PROBLEM_TEXT = """
(define (problem tiny_problem) (:domain tiny)
  (:objects cup_1 - cup bowl_1 - bowl table_1 - table)
  (:init (hand_free))
  (:goal (served table_1)))
"""


@pytest.fixture
def tiny() -> PlanningTask:
    """A three-action cup domain with a bowl present (no bowl actions)."""
    return PlanningTask.from_text(DOMAIN_TEXT, PROBLEM_TEXT, "tiny")


@pytest.fixture
def tiny_files(tmp_path: Path) -> tuple[Path, Path]:
    domain = tmp_path / "domain.pddl"
    problem = tmp_path / "problem.pddl"
    domain.write_text(DOMAIN_TEXT)
    problem.write_text(PROBLEM_TEXT)
    return domain, problem


@pytest.fixture(scope="session")
def fill_cup() -> TaskSpec:
    return get_task("fill_cup")
