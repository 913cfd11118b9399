"""The judge files and the dataset reader: every situation decided, bad files refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bench_fixtures import ANNOTATIONS, DATASET

from cowp_ros.bench.annotations import Effect, load_annotation, load_annotations
from cowp_ros.bench.dataset import DatasetSituation, SituationDataset, draw_situation
from cowp_ros.errors import CowpError
from cowp_ros.tasks import get_task

needs_dataset = pytest.mark.skipif(
    not (DATASET / "situations.json").is_file(), reason="the public dataset is not here"
)


def situation(index: int, obj: str, task_id: int = 4) -> DatasetSituation:
    return DatasetSituation(task_id, index, f"the {obj} is odd.", "", obj, 3, (("fill_cup", 3),))


@needs_dataset
def test_every_dataset_situation_has_an_effect_written_down() -> None:
    dataset = SituationDataset.load(DATASET)
    annotations = load_annotations(ANNOTATIONS)
    for task_id in dataset.task_ids():
        spec = get_task(task_id)
        annotations[spec.name].check_covers(dataset.for_task(task_id), spec)
    assert sorted(a.dataset_id for a in annotations.values()) == dataset.task_ids()


def test_effects_come_from_overrides_object_words_or_the_default_object() -> None:
    annotation = load_annotation(ANNOTATIONS / "fill_cup.yaml")
    spec = get_task("fill_cup")
    assert annotation.effect_of(situation(0, "cup"), spec).target == "cup_1"
    water = annotation.effect_of(situation(4, "water"), spec)
    assert (water.target, water.rule) == ("faucet_1", "objects.water")
    hot = annotation.effect_of(situation(5, "water"), spec)
    assert hot.effect is Effect.BEYOND_SKILLS and hot.why
    with pytest.raises(CowpError, match="no effect written down"):
        annotation.effect_of(situation(99, "power"), spec)


def test_acceptability_is_per_role_and_counted() -> None:
    annotation = load_annotation(ANNOTATIONS / "fill_cup.yaml")
    assert annotation.acceptable_in_role("cup", "bowl")
    assert not annotation.acceptable_in_role("cup", "pan")
    assert not annotation.acceptable_in_role("faucet", "sink")
    assert annotation.counts["acceptable.cup.bowl=yes"] == 1
    assert annotation.counts["acceptable.cup.pan=no"] == 1


def test_a_malformed_annotation_is_refused_with_the_format_named(tmp_path: Path) -> None:
    bad = tmp_path / "fill_cup.yaml"
    bad.write_text("task: fill_cup\ndataset_id: 4\nsituations:\n  3: {effect: melts}\n")
    with pytest.raises(CowpError, match=r"annotations/README\.md"):
        load_annotation(bad)


def test_situations_are_drawn_by_the_crowd_count_at_the_step(tmp_path: Path) -> None:
    records = [
        {"task_id": 4, "situation_index": 0, "situation": "a.", "object": "cup", "count": 9,
         "task_total": 10, "actions": [{"action": "fill_cup", "count": 9, "of": 9}]},
        {"task_id": 4, "situation_index": 1, "situation": "b.", "object": "cup", "count": 1,
         "task_total": 10, "actions": [{"action": "fill_cup", "count": 1, "of": 1},
                                       {"action": "find_cup", "count": 5, "of": 1}]},
    ]  # fmt: skip
    (tmp_path / "situations.json").write_text(json.dumps(records))
    dataset = SituationDataset.load(tmp_path)
    rng = random.Random(1)
    at_fill = [draw_situation(dataset.at_step(4, "fill_cup"), "fill_cup", rng) for _ in range(2000)]
    share = sum(s is not None and s.index == 0 for s in at_fill) / len(at_fill)
    assert 0.85 < share < 0.95
    at_find = {draw_situation(dataset.at_step(4, "find_cup"), "find_cup", rng) for _ in range(50)}
    assert {s.index for s in at_find if s} == {1}
    assert draw_situation(dataset.at_step(4, "place_cup"), "place_cup", rng) is None


def test_a_missing_dataset_says_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(CowpError, match="GPT-Planner"):
        SituationDataset.load(tmp_path)
