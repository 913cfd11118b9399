"""Fixtures for the core unit tests: registered tasks, small problems, scripted models."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.pddl import PlanningTask
from cowp_ros.tasks import TaskSpec, get_task

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


@pytest.fixture(autouse=True)
def reports_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cowp run` writes a report on every run; keep the tests' out of build/reports."""
    monkeypatch.setenv("COWP_REPORTS_DIR", str(tmp_path / "reports"))


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
