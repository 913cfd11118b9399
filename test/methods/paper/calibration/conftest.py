"""Fixtures for the calibration tests: a tiny dataset and benign set, and no stray config.

`COWP_MONITOR_CALIBRATION` points at a file that does not exist unless a test writes
it, so no test depends on the thresholds the project has tuned for a real model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BLOCKING_RECORDS = [
    {
        "task_id": 4,
        "situation_index": index,
        "situation": text,
        "situation_opposite": normal,
        "object": "cup",
        "count": 3,
        "task_total": 20.0,
        "actions": [
            {"action": "find_cup", "count": 1, "of": 3.0},
            {"action": action, "count": 2, "of": 3.0},
        ],
    }
    for index, (text, normal, action) in enumerate(
        [
            ("the cup is broken.", "cup is intact.", "fill_cup"),
            ("the cup is dirty.", "cup is clean.", "hold_cup"),
            ("the faucet is broken.", "faucet works.", "turnon_faucet"),
            ("there is no water.", "water available.", "fill_cup"),
        ]
    )
] + [
    {
        "task_id": 10,
        "situation_index": index,
        "situation": text,
        "situation_opposite": "fine.",
        "object": "glass",
        "count": 2,
        "task_total": 10.0,
        "actions": [{"action": "pour_coke", "count": 2, "of": 2.0}],
    }
    for index, text in enumerate(["the glass is broken.", "the coke is missing."])
]

BENIGN_YAML = """
fill_cup:
  - {step: fill_cup, kind: attribute, situation: the cup is blue}
  - {step: hold_cup, kind: variation, situation: the cup is made of plastic}
  - {step: place_cup, kind: elsewhere, situation: it is raining outside}
  - {step: find_cup, kind: robot, situation: the battery is at 80 percent}
pour_coke:
  - {step: pour_coke, kind: attribute, situation: the glass is tall}
  - {step: grasp_coke, kind: unrelated, situation: there is a book on the table}
"""


@pytest.fixture(autouse=True)
def no_default_calibration(monkeypatch, tmp_path: Path) -> Path:
    path = tmp_path / "no_such_calibration.yaml"
    monkeypatch.setenv("COWP_MONITOR_CALIBRATION", str(path))
    return path


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "situations.json").write_text(json.dumps(BLOCKING_RECORDS))
    return folder


@pytest.fixture
def benign_file(tmp_path: Path) -> Path:
    path = tmp_path / "benign.yaml"
    path.write_text(BENIGN_YAML)
    return path
