"""The default planner (`auto`): Fast Downward's eager search where it is installed,
chosen by what is installed alone, with plans as direct as pyperplan's on the
project's own tasks (`planning/factory.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import make_planner
from cowp_ros.planning.fast_downward import is_available
from cowp_ros.planning.replay import replay
from cowp_ros.tasks import all_tasks, get_task

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))
from own_task import DOMAIN as WATER_PLANT_DOMAIN
from own_task import PROBLEM as WATER_PLANT_PROBLEM

pytestmark = pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed")

OWN = "water_plant"
"""A user's task, outside the shipped ones, where LAMA-first's plan takes a detour."""


def _task(name: str) -> PlanningTask:
    if name == OWN:
        return PlanningTask.from_text(WATER_PLANT_DOMAIN, WATER_PLANT_PROBLEM, OWN)
    return get_task(name).load()


@pytest.mark.parametrize("name", [*sorted(all_tasks()), OWN])
def test_the_default_plans_as_directly_as_pyperplan(name: str) -> None:
    task = _task(name)
    default = make_planner().solve(task, 60)
    pyperplan = make_planner("pyperplan").solve(task, 60)
    assert default.found and pyperplan.found
    assert default.planner == "fast_downward"
    assert len(default.steps) == len(pyperplan.steps), (default.steps, pyperplan.steps)
    assert replay(task, default.steps)


def test_lama_first_stays_selectable_and_takes_the_detour_the_default_does_not() -> None:
    """`--planner fd` is LAMA-first as Fast Downward's users run it: on the water-the-plant
    task its lazy search walks to the plant, then to the sink and back."""
    task = _task(OWN)
    lama = make_planner("fd").solve(task, 60)
    default = make_planner().solve(task, 60)
    walks = [str(step) for step in lama.steps if step.action == "walk_to"]
    assert walks == [
        "(walk_to shelf_1 plant_spot_1)",
        "(walk_to plant_spot_1 sink_1)",
        "(walk_to sink_1 plant_spot_1)",
    ]
    assert len(default.steps) == len(lama.steps) - 1


def test_the_same_task_gets_the_same_plan_every_time() -> None:
    """No clock decides anything: a replan, or the benchmark's record, repeats."""
    task = get_task("serve_water").load()
    plans = {tuple(make_planner().solve(task, 60).steps) for _ in range(3)}
    assert len(plans) == 1
