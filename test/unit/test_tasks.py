"""The task registry, the shipped dining domains, and problems of a chosen size."""

from __future__ import annotations

import json

import pytest
from cowp_unit_paths import DATASET, REPO

from cowp_ros.errors import CowpError
from cowp_ros.planning import make_planner
from cowp_ros.tasks import UnknownTaskError, all_tasks, get_task, pddl_dir
from cowp_ros.tasks.phrases import ActionPhrases


def test_each_dataset_task_is_found_by_its_id_and_serve_water_by_its_name() -> None:
    """A dataset id names one registered task (`cowp run 4`, the benchmark's trials find
    it by that id), in one of the two splits; the demo's task is registered beside them."""
    dataset_tasks = [spec for spec in all_tasks().values() if spec.dataset_id is not None]
    assert dataset_tasks, "the registry holds the dataset's tasks"
    assert len({spec.dataset_id for spec in dataset_tasks}) == len(dataset_tasks)
    for spec in dataset_tasks:
        assert get_task(spec.dataset_id) == get_task(f"task{spec.dataset_id}") == spec
        assert spec.split in ("dev", "test"), spec.name
    assert get_task("serve_water").dataset_id is None
    assert pddl_dir() == REPO / "pddl"


@pytest.mark.parametrize(
    ("key", "name"),
    [("fill_cup", "fill_cup"), ("task4", "fill_cup"), (4, "fill_cup"), ("10", "pour_coke"),
     ("Serve-Water", "serve_water"), ("water", "serve_water"), ("burger", "eat_burger")],
)  # fmt: skip
def test_names_aliases_and_dataset_ids_resolve(key: str | int, name: str) -> None:
    assert get_task(key).name == name


def test_unknown_task_lists_the_known_ones() -> None:
    with pytest.raises(UnknownTaskError) as err:
        get_task("make_coffee")
    message = str(err.value)
    assert "unknown task 'make_coffee'" in message
    for name in ("fill_cup", "serve_water", "pour_coke"):
        assert name in message


@pytest.mark.parametrize("name", sorted(all_tasks()))
def test_every_task_plans_and_every_action_has_a_phrase(name: str) -> None:
    spec = get_task(name)
    task = spec.load()
    assert set(spec.task_objects) <= set(task.objects)
    assert len(task.objects) >= 43, "the replanning benchmark needs 43 objects"
    assert set(task.actions) == set(spec.phrases), "one phrase per action"
    result = make_planner("pyperplan").solve(task, 60)
    assert result.found
    used = {a for step in result.steps for a in step.args}
    assert used <= set(spec.task_objects), "the closed-world plan uses the task's objects"
    phrases = ActionPhrases(spec.phrases)
    for step in result.steps:
        assert "_" not in phrases.describe(step, task)


@pytest.mark.skipif(not (DATASET / "situations.json").is_file(), reason=f"no dataset at {DATASET}")
def test_dataset_step_actions_exist_in_the_domains() -> None:
    records = json.loads((DATASET / "situations.json").read_text())
    for record in records:
        spec = get_task(record["task_id"])
        actions = spec.load().actions
        for entry in record["actions"]:
            assert entry["action"] in actions, (spec.name, entry["action"])


def test_build_problem_with_n_objects_is_seeded(fill_cup) -> None:
    first = fill_cup.build_problem(43, seed=7)
    again = fill_cup.build_problem(43, seed=7)
    other = fill_cup.build_problem(43, seed=8)
    assert len(first.objects) == 43
    assert set(fill_cup.task_objects) <= set(first.objects)
    assert first.objects == again.objects
    assert first.objects != other.objects
    half = fill_cup.build_problem(pool_fraction=0.5, seed=1)
    assert len(half.objects) == 3 + round(len(fill_cup.pool()) / 2)


def test_build_problem_refuses_impossible_sizes(fill_cup) -> None:
    with pytest.raises(CowpError, match="can have 3 to"):
        fill_cup.build_problem(2)
    with pytest.raises(CowpError, match="can have 3 to"):
        fill_cup.build_problem(1000)
    with pytest.raises(CowpError, match="not both"):
        fill_cup.build_problem(10, pool_fraction=0.5)


def test_pddl_dir_can_be_pointed_elsewhere(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COWP_PDDL_DIR", str(tmp_path))
    assert pddl_dir() == REPO / "pddl"  # no tasks.yaml there: falls through
    (tmp_path / "tasks.yaml").write_text("{}\n")
    assert pddl_dir() == tmp_path


def test_a_task_name_typo_gets_a_did_you_mean() -> None:
    from cowp_ros.errors import CowpError
    from cowp_ros.tasks import get_task

    with pytest.raises(CowpError) as caught:
        get_task("serve_watr")
    assert caught.value.message == "unknown task 'serve_watr'; did you mean 'serve_water'?"
    assert "known tasks:" in caught.value.hint
    with pytest.raises(CowpError) as caught:
        get_task("fly to the moon")
    assert "did you mean" not in caught.value.message
