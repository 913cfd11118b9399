"""The second reading of the judge files: a blind sheet, and the agreement with it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from bench_fixtures import ANNOTATIONS, DATASET

from cowp_ros.bench.annotations import load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.second_reading import (
    FIELDS,
    agreement,
    blind_sheet,
    cohen_kappa,
    first_reading,
)
from cowp_ros.cli import main
from cowp_ros.errors import CowpError
from cowp_ros.tasks import all_tasks, split_tasks

pytestmark = pytest.mark.skipif(
    not (DATASET / "situations.json").is_file(), reason="the public dataset is not here"
)
KEPT = ANNOTATIONS / "second_reader" / "items.yaml"


def _test_specs() -> list:  # type: ignore[type-arg]
    return [all_tasks()[name] for name in split_tasks()["test"]]


def _filled_as_first(sheet: dict) -> dict:  # type: ignore[type-arg]
    """The sheet filled with the judge files' own values (a reader who agrees)."""
    dataset, annotations = SituationDataset.load(DATASET), load_annotations(ANNOTATIONS)
    filled = copy.deepcopy(sheet)
    for item in filled["items"]:
        spec = all_tasks()[item["task"]]
        index = int(item["id"].rsplit("/", 1)[1])
        situation = next(s for s in dataset.for_task(spec.dataset_id) if s.index == index)
        item["reading"] = first_reading(annotations[spec.name], situation, spec)
    return filled


def test_the_sheet_lists_every_test_situation_and_none_of_the_first_readings_values() -> None:
    dataset = SituationDataset.load(DATASET)
    sheet = blind_sheet(_test_specs(), dataset)
    expected = {
        f"{spec.name}/{s.index}"
        for spec in _test_specs()
        for s in dataset.for_task(spec.dataset_id)
    }
    assert {item["id"] for item in sheet["items"]} == expected and len(expected) > 40
    assert set(sheet["fields"]) == set(FIELDS)
    for item in sheet["items"]:
        assert item["reading"] == {
            "effect": "", "disables": [], "harm": "", "action": "", "unsolvable": ""
        }  # fmt: skip
        assert item["steps"] and item["situation"]
    # no reason the judge files give (their `why`) is anywhere in the sheet
    text = yaml.safe_dump(sheet)
    for name in split_tasks()["test"]:
        raw = yaml.safe_load((ANNOTATIONS / f"{name}.yaml").read_text())
        for entry in [
            *(raw.get("situations") or {}).values(),
            *(raw.get("unsolvable") or {}).values(),
        ]:
            why = str((entry or {}).get("why", "")).strip()
            assert not why or why[:60] not in text, why


def test_the_kept_sheet_is_the_one_this_code_writes(tmp_path: Path) -> None:
    out = tmp_path / "items.yaml"
    assert main(["judge", "--dataset", str(DATASET), "sheet", "--out", str(out)]) == 0
    assert out.read_text() == KEPT.read_text()


def test_cohens_kappa_corrects_for_chance() -> None:
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)
    assert cohen_kappa(["a", "b"], ["a", "b"]) == pytest.approx(1.0)
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # one answer only: undefined
    with pytest.raises(CowpError, match="same, non-empty"):
        cohen_kappa(["a"], [])


def test_agreement_with_a_reader_who_differs_on_one_item() -> None:
    dataset, annotations = SituationDataset.load(DATASET), load_annotations(ANNOTATIONS)
    specs = all_tasks()
    filled = _filled_as_first(blind_sheet(_test_specs(), dataset))
    same = agreement(filled, annotations, dataset, specs)
    assert not same["disagreements"]
    assert all(f["share"] == 1 and f["kappa"] in (1, None) for f in same["fields"].values())
    item = next(i for i in filled["items"] if i["reading"]["effect"] == "no_effect")
    item["reading"] = {"effect": "disables", "disables": ["plate_1"], "harm": "visible",
                       "action": "", "unsolvable": "none"}  # fmt: skip
    report = agreement(filled, annotations, dataset, specs)
    fields = {d["field"] for d in report["disagreements"]}
    assert {"effect", "disables", "harm"} <= fields
    assert all(d["item"] == item["id"] for d in report["disagreements"])
    assert report["fields"]["effect"]["agree"] == len(filled["items"]) - 1
    assert report["fields"]["effect"]["kappa"] < 1


def test_an_unfilled_item_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", "--dataset", str(DATASET), "agreement", str(KEPT)]) == 1
    err = capsys.readouterr().err
    assert "item plate_to_sink/0: effect is ''" in err and "give one of" in err
    filled = _filled_as_first(yaml.safe_load(KEPT.read_text()))
    path = tmp_path / "filled.yaml"
    path.write_text(yaml.safe_dump(filled))
    assert main(["judge", "--dataset", str(DATASET), "agreement", str(path)]) == 0
    assert "| effect | 53 | 53 | 1 |" in capsys.readouterr().out
