"""The judge files and the dataset reader: every situation decided, bad files refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bench_fixtures import ANNOTATIONS, DATASET

from cowp_ros.bench.annotations import (
    Effect,
    Harm,
    inconsistencies,
    load_annotation,
    load_annotations,
)
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
    assert annotation.effect_of(situation(0, "cup"), spec).targets == ("cup_1",)
    water = annotation.effect_of(situation(4, "water"), spec)
    assert (water.targets, water.rule) == (("faucet_1",), "situations.4")
    assert water.targets_at("place_cup") == ("faucet_1", "cup_1")  # the full cup too
    sink = annotation.effect_of(situation(8, "sink"), spec)
    assert (sink.targets, sink.rule) == (("faucet_1",), "objects.sink")
    hot = annotation.effect_of(situation(5, "water"), spec)
    assert hot.effect is Effect.BEYOND_SKILLS and hot.why and hot.targets_at("fill_cup") == ()
    with pytest.raises(CowpError, match="no effect written down"):
        annotation.effect_of(situation(99, "power"), spec)


def test_stand_ins_are_judged_per_action_and_counted() -> None:
    annotation = load_annotation(ANNOTATIONS / "clean_area.yaml")
    assert annotation.accepts("vacuum", "broom", "sweep_area")
    assert not annotation.accepts("vacuum", "broom", "plug_vacuum")  # no plugging a broom
    assert not annotation.accepts("vacuum", "broom", "clean_area")  # a broom is never on
    assert annotation.accepts("vacuum", "mop", "sweep_area")
    assert not annotation.accepts("vacuum", "bucket", "sweep_area")
    assert annotation.counts["stand_ins.vacuum.broom.plug_vacuum=no"] == 1
    assert annotation.accepted_for_role("vacuum", ["grasp_vacuum", "plug_vacuum"]) == []
    fill = load_annotation(ANNOTATIONS / "fill_cup.yaml")
    assert fill.accepted_kinds("cup", "place_cup") == ["bottle", "bowl", "glass", "mug"]


def test_a_malformed_annotation_is_refused_with_the_format_named(tmp_path: Path) -> None:
    bad = tmp_path / "fill_cup.yaml"
    bad.write_text("task: fill_cup\ndataset_id: 4\nsituations:\n  3: {effect: melts}\n")
    with pytest.raises(CowpError, match=r"annotations/README\.md"):
        load_annotation(bad)
    old = tmp_path / "old.yaml"
    old.write_text("task: fill_cup\ndataset_id: 4\nacceptable: {cup: [bowl]}\n")
    with pytest.raises(CowpError, match="old format"):
        load_annotation(old)
    unsolvable = tmp_path / "unsolvable.yaml"
    unsolvable.write_text("task: fill_cup\ndataset_id: 4\nunsolvable: {5: {reason: hard}}\n")
    with pytest.raises(CowpError, match="reason must be one of"):
        load_annotation(unsolvable)


def test_a_stand_in_for_an_action_its_role_does_not_have_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "fill_cup.yaml"
    bad.write_text("task: fill_cup\ndataset_id: 4\nstand_ins: {cup: {bowl: [turnon_faucet]}}\n")
    with pytest.raises(CowpError, match="not actions with a cup"):
        load_annotation(bad).check_covers([], get_task("fill_cup"))


@needs_dataset
def test_the_same_words_are_judged_alike_in_every_task_unless_a_file_says_why() -> None:
    dataset = SituationDataset.load(DATASET)
    annotations = load_annotations(ANNOTATIONS)
    specs = {s: get_task(s) for s in dataset.task_ids()}
    assert inconsistencies(annotations, dataset.situations, specs) == []
    # "the table is dirty." is judged in three tasks; plate_to_sink says why it differs
    assert annotations["plate_to_sink"].task_specific(9)
    annotations["plate_to_sink"].situations[9].pop("task_specific")
    found = inconsistencies(annotations, dataset.situations, specs)
    assert [(f.text, f.object) for f in found] == [("the table is dirty", "table")]
    assert "plate_to_sink #9: no_effect" in str(found[0])


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


SILENT_WORDS = ("dirty", "hot", "occupied", "smells", "expired", "wet", "flat", "sticky",
                "canister is full")  # fmt: skip
VISIBLE_WORDS = ("missing", "broken", "not found", "cannot", "not available", "damaged",
                 "falls", "spills", "empty", "frozen", "not working", "grabbed")  # fmt: skip


@needs_dataset
def test_each_blocking_effect_says_whether_the_robot_would_see_it() -> None:
    """Dirt, contamination, heat, a person on the chair: the step succeeds and only
    understanding avoids the harm. Missing, broken, stuck: the step fails visibly."""
    dataset = SituationDataset.load(DATASET)
    annotations = load_annotations(ANNOTATIONS)
    judged = {"silent": [], "visible": []}
    for situation_ in dataset.situations:
        spec = get_task(situation_.task_id)
        effect = annotations[spec.name].effect_of(situation_, spec)
        if effect.effect is Effect.NO_EFFECT:
            continue
        text = situation_.text.lower()
        where = f"{spec.name} #{situation_.index} {text!r}"
        if any(w in text for w in VISIBLE_WORDS):  # "the dirty plate is missing"
            assert effect.harm is Harm.VISIBLE, f"{where} makes the step fail visibly"
        elif any(w in text for w in SILENT_WORDS):
            assert effect.harm is Harm.SILENT, f"{where} is a harm the robot cannot see"
        judged[effect.harm.value].append(where)
    assert len(judged["silent"]) >= 15 and len(judged["visible"]) >= 40


@needs_dataset
def test_the_same_words_with_another_harm_are_an_inconsistency() -> None:
    dataset = SituationDataset.load(DATASET)
    annotations = load_annotations(ANNOTATIONS)
    specs = {s: get_task(s) for s in dataset.task_ids()}
    annotations["set_table"].situations[3]["harm"] = "visible"  # "the fork is dirty."
    found = inconsistencies(annotations, dataset.situations, specs)
    assert [(f.text, f.object) for f in found] == [("the fork is dirty", "fork")]
    assert "set_table #3: disables/visible" in str(found[0])
    assert "eat_burger #6: disables/silent" in str(found[0])


def test_a_harm_is_visible_or_silent_and_only_for_a_blocking_effect(tmp_path: Path) -> None:
    bad = tmp_path / "fill_cup.yaml"
    bad.write_text("task: fill_cup\ndataset_id: 4\nsituations:\n  2: {harm: smelly}\n")
    with pytest.raises(CowpError, match="smelly"):
        load_annotation(bad)
    bad.write_text("task: fill_cup\ndataset_id: 4\nsituations:\n"
                   "  2: {effect: no_effect, harm: silent, why: w}\n")  # fmt: skip
    with pytest.raises(CowpError, match="does no harm"):
        load_annotation(bad)
    bad.write_text("task: fill_cup\ndataset_id: 4\nsituations:\n"
                   "  5: {effect: beyond_skills, action: boil_water, why: w}\n")  # fmt: skip
    with pytest.raises(CowpError, match="boil_water"):
        load_annotation(bad).check_covers(
            [DatasetSituation(4, 5, "the water is hot.", "", "water", 3, (("fill_cup", 3),))],
            get_task("fill_cup"),
        )
    annotation = load_annotation(ANNOTATIONS / "fill_cup.yaml")
    spec = get_task("fill_cup")
    dirty = annotation.effect_of(situation(2, "cup"), spec)
    assert (dirty.effect, dirty.harm, dirty.targets) == (Effect.DISABLES, Harm.SILENT, ("cup_1",))
    hot = annotation.effect_of(situation(5, "water"), spec)
    assert (hot.effect, hot.harm, hot.action) == (Effect.BEYOND_SKILLS, Harm.SILENT, "fill_cup")
