"""The calibration items: the packaged benign set, the dataset reader, the fixed split."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.calibration.situations import (
    BENIGN_KINDS,
    assign_splits,
    ground_step,
    load_benign_situations,
    load_items,
    parse_benign,
    parse_dataset,
    select_split,
    template,
)
from cowp_ros.tasks import get_task, split_tasks

TASKS = {"fill_cup", "clean_area", "set_table", "plate_to_sink", "pour_coke", "eat_burger"}


def test_the_packaged_benign_set_covers_every_task_with_real_steps() -> None:
    items = load_benign_situations()
    assert len(items) >= 60
    assert {item.task for item in items} == TASKS | {"serve_water"}
    assert not any(item.blocking for item in items)
    assert {item.kind for item in items} <= BENIGN_KINDS
    assert len({item.key for item in items}) == len(items)
    for item in items:
        spec = get_task(item.task)
        assert item.action in spec.load().actions, item.key
        step, _ = ground_step(item.task, item.action)
        assert step.action == item.action


def test_the_split_is_deterministic_disjoint_and_complete() -> None:
    items = load_benign_situations()
    first, second = assign_splits(items), assign_splits(list(reversed(items)))
    assert first == second
    dev = {i.key for i in load_benign_situations("dev")}
    test = {i.key for i in load_benign_situations("test")}
    assert dev and test and not dev & test
    assert dev | test == {i.key for i in items}


def test_the_split_is_by_task_test_tasks_only_on_the_test_side(
    dataset_dir: Path, benign_file: Path
) -> None:
    items = load_items(dataset_dir, "all", benign_file)
    splits = assign_splits(items)
    test_tasks = set(split_tasks()["test"])
    assert test_tasks == {"plate_to_sink", "pour_coke", "eat_burger"}
    for item in items:
        assert splits[item.key] == ("test" if item.task in test_tasks else "dev"), item.key
    packaged = load_benign_situations("all")
    dev_tasks = {i.task for i in load_benign_situations("dev")}
    assert dev_tasks == {i.task for i in packaged} - test_tasks


def test_another_set_of_test_tasks_deals_another_split() -> None:
    items = load_benign_situations()
    assert assign_splits(items, ["fill_cup"]) != assign_splits(items)
    assert {i.task for i in select_split(items, "test", ["fill_cup"])} == {"fill_cup"}


def test_loading_benign_items_alone_gives_the_same_split_as_with_the_dataset(
    dataset_dir: Path, benign_file: Path
) -> None:
    together = {i.key for i in load_items(dataset_dir, "dev", benign_file) if not i.blocking}
    alone = {i.key for i in load_benign_situations("dev", benign_file)}
    assert together == alone


def test_dataset_items_are_asked_at_their_most_named_step(dataset_dir: Path) -> None:
    items = [i for i in load_items(dataset_dir, "all", Path("/dev/null")) if i.blocking]
    assert len(items) == 6
    dirty = next(i for i in items if i.situation == "the cup is dirty.")
    assert (dirty.task, dirty.action, dirty.normal) == ("fill_cup", "hold_cup", "cup is clean.")


def test_bad_benign_entries_are_named() -> None:
    with pytest.raises(CowpError, match="has no action 'boil_water'"):
        parse_benign("fill_cup:\n  - {step: boil_water, situation: it is sunny}\n")
    with pytest.raises(CowpError, match="unknown kind 'colour'"):
        parse_benign("fill_cup:\n  - {step: fill_cup, kind: colour, situation: blue}\n")
    with pytest.raises(CowpError, match="needs step and situation"):
        parse_benign("fill_cup:\n  - {step: fill_cup}\n")


def test_bad_dataset_records_and_splits_are_named() -> None:
    with pytest.raises(CowpError, match="malformed record"):
        parse_dataset([{"task_id": 4, "situation": "x"}])
    with pytest.raises(CowpError, match="unknown split 'train'"):
        select_split([], "train")
    with pytest.raises(CowpError, match="cannot read"):
        load_items(Path("/nonexistent/dataset"), "dev")


def test_no_test_sentence_shares_a_template_with_a_dev_one() -> None:
    dev = {template(i.situation) for i in load_benign_situations("dev")}
    test = load_benign_situations("test")
    assert len(test) == 30
    shared = [i.situation for i in test if template(i.situation) in dev]
    assert shared == []


def test_a_sentence_with_a_noun_colour_or_material_swapped_keeps_its_template() -> None:
    assert template("the cup is blue") == template("the plate is white")
    assert template("the cup is made of plastic") == template("the table is made of glass")
    assert template("a chair was moved in the living room") == template(
        "a chair was moved in the bedroom"
    )
    assert template("the glass is tall") != template("the cup is blue")


def test_a_benign_set_whose_test_sentences_reuse_dev_templates_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "benign.yaml"
    path.write_text(
        "fill_cup:\n  - {step: fill_cup, kind: attribute, situation: the cup is blue}\n"
        "pour_coke:\n  - {step: find_glass, kind: attribute, situation: the glass is white}\n"
        "  - {step: find_glass, kind: attribute, situation: the glass is tall}\n"
    )
    with pytest.raises(CowpError, match=r"1 test sentence\(s\) share a template") as err:
        load_benign_situations("test", path)
    assert "'the glass is white' ~ fill_cup: 'the cup is blue'" in str(err.value)
