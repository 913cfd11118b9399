"""The dataset's own harmless sentences: each situation's normal state, as distractors."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_fixtures import DATASET

from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.opposites import opposite_distractors
from cowp_ros.cli import main
from cowp_ros.cli.bench import read_distractors
from cowp_ros.tasks import all_tasks, split_tasks

pytestmark = pytest.mark.skipif(
    not (DATASET / "situations.json").is_file(), reason="the public dataset is not here"
)
KEPT = Path(__file__).resolve().parents[2] / "benchmarks" / "distractors" / "test_opposites.yaml"


def test_each_situation_gives_its_normal_state_at_its_commonest_step() -> None:
    dataset = SituationDataset.load(DATASET)
    specs = [all_tasks()[n] for n in split_tasks()["test"]]
    found = opposite_distractors(specs, dataset)
    chair = next(d for d in found if d["of"] == "the chair is broken.")
    assert chair == {
        "text": "a chair unbroken.", "task": "eat_burger", "step": "find_chair",
        "kind": "dataset_opposite", "of": "the chair is broken.",
    }  # fmt: skip
    # 53 test situations; "a plate found" and "a plate on the table" are each said twice
    assert len(found) == 51 and {d["task"] for d in found} == set(split_tasks()["test"])
    for d in found:
        spec = all_tasks()[d["task"]]
        situation = next(s for s in dataset.for_task(spec.dataset_id) if s.text == d["of"])
        assert d["step"] in dict(situation.at_actions)


def test_the_kept_file_is_this_codes_and_cowp_bench_reads_it(tmp_path: Path) -> None:
    out = tmp_path / "o.yaml"
    assert main(["judge", "--dataset", str(DATASET), "opposites", "--out", str(out)]) == 0
    assert out.read_text() == KEPT.read_text()
    read = read_distractors(str(KEPT))
    assert len(read) == 51 and read[0].task == "plate_to_sink" and read[0].step == "walk_sink"
