"""An AcquireKnowledge request is checked against the PDDL it is about before the model
is asked anything: a role no role action has ended in "internal error ValueError:
tuple.index(x)" after one question, and kinds absent from the PDDL (`spaceship`) or
the role's own kind were accepted and chosen."""

from __future__ import annotations

from typing import Any

import pytest

from cowp_interfaces.srv import AcquireKnowledge
from cowp_ros.errors import CowpError
from cowp_ros.ros.request_limits import check_acquire_fits
from cowp_ros.tasks import get_task


def _request(**fields: Any) -> AcquireKnowledge.Request:
    defaults: dict[str, Any] = {
        "task": "serve_water",
        "role_type": "cup",
        "actions": ["fill_water"],
        "candidate_types": ["mug"],
        "candidate_examples": ["mug_1"],
    }
    return AcquireKnowledge.Request(**{**defaults, **fields})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"role_type": "spoon"}, r"role action 'fill_water' takes no parameter of the role"),
        ({"role_type": "rocket"}, r"role type 'rocket' is not a type of the request's domain"),
        ({"actions": ["teleport"]}, r"role action 'teleport' is not an action"),
        ({"candidate_types": ["spaceship"]}, r"'spaceship': not a type of the request's"),
        ({"candidate_types": ["cup"]}, r"'cup': it is the role's own type"),
        (
            {"candidate_types": ["cup"], "select_only": True, "actions": []},
            r"'cup': it is the role's own type",
        ),
    ],
)
def test_a_request_that_does_not_fit_its_pddl_is_refused(fields: dict, message: str) -> None:
    task = get_task("serve_water").load()
    with pytest.raises(CowpError, match=message):
        check_acquire_fits(_request(**fields), task)


def test_with_its_own_pddl_each_example_is_an_object_of_its_kind() -> None:
    task = get_task("serve_water").load()
    request = _request(
        domain_pddl=task.domain_text(),
        problem_pddl=task.problem_text(),
        candidate_examples=["cup_1"],
    )
    with pytest.raises(CowpError, match=r"'cup_1': not an object of kind 'mug'"):
        check_acquire_fits(request, task)


def test_the_task_managers_own_requests_fit() -> None:
    task = get_task("serve_water").load()
    check_acquire_fits(
        _request(candidate_types=["bowl", "mug"], candidate_examples=["b", "m"]), task
    )
    check_acquire_fits(_request(select_only=True, actions=[]), task)
