"""The per-model calibration file: round trip, and errors that name the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.calibration.config import (
    MonitorCalibration,
    calibration_for,
    load_calibrations,
    write_calibration,
)
from cowp_ros.methods.paper.calibration.scoring import TaskExample, get_variant


def test_write_then_read_keeps_other_models(tmp_path: Path) -> None:
    path = tmp_path / "calibration.yaml"
    write_calibration(path, MonitorCalibration("model-a", get_variant("plain"), 0.25))
    pool = (TaskExample("pour_coke", "Is it ...?", "No", True),)
    write_calibration(
        path,
        MonitorCalibration("model-b", get_variant("crosstask"), -1.5, pool, {"recall": 0.9}),
    )
    loaded = load_calibrations(path)
    assert set(loaded) == {"model-a", "model-b"}
    assert loaded["model-a"].threshold == 0.25 and loaded["model-a"].variant.name == "plain"
    assert loaded["model-b"].examples == pool
    assert path.read_text().startswith("# Plan Monitor calibration")
    write_calibration(path, MonitorCalibration("model-a", get_variant("prevents"), 0.1))
    assert calibration_for("model-a", path).variant.name == "prevents"  # type: ignore[union-attr]
    assert calibration_for("model-b", path) is not None
    assert calibration_for("model-c", path) is None


def test_a_missing_default_file_means_no_calibration(no_default_calibration: Path) -> None:
    assert not no_default_calibration.exists()
    assert calibration_for("any-model") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: [1, 2]\n", "expected 'models:'"),
        ("models:\n  m: {threshold: 0.5}\n", "needs variant and threshold"),
        ("models:\n  m: {variant: magic, threshold: 0.5}\n", "unknown monitor variant 'magic'"),
        ("models:\n  m: {variant: plain, threshold: high}\n", "threshold must be a number"),
        ("models:\n  m: {variant: crosstask, threshold: 0.5}\n", "needs its examples"),
        ("models:\n  m: [plain]\n", "must be a mapping"),
        ("models: {m: {variant: plain\n", "not valid YAML"),
    ],
)
def test_bad_files_are_errors_naming_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "calibration.yaml"
    path.write_text(text)
    with pytest.raises(CowpError, match=message):
        load_calibrations(path)


def test_a_named_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CowpError, match="cannot read monitor calibration"):
        calibration_for("m", tmp_path / "absent.yaml")
