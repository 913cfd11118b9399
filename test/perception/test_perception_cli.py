"""`cowp detect` on real photos: what a person reads, the files it writes, its errors."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from cowp_ros.cli import main


def write(path: Path, image: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), image)
    return path


def test_detect_prints_detections_situations_and_writes_annotated_images(
    default_model: Path,
    tmp_path: Path,
    coffee: np.ndarray,
    bus: np.ndarray,
    zidane: np.ndarray,
    astronaut: np.ndarray,
    cup_with_person_inside: np.ndarray,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # PNG keeps the composite's pixels exact (JPEG would re-encode them).
    names = ["coffee", "bus", "zidane", "astronaut", "cup_with_person"]
    frames = [coffee, bus, zidane, astronaut, cup_with_person_inside]
    images = [
        write(tmp_path / f"{name}.png", frame) for name, frame in zip(names, frames, strict=True)
    ]
    out = tmp_path / "out"
    argv = ["detect", *map(str, images), "--backend", "onnxruntime", "--target", "cup_1"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    text = {
        name: section
        for name, section in zip(names, printed.split(f"{tmp_path}/")[1::2], strict=True)
    }
    assert "cup 0.6" in text["coffee"] and "none, the cup is in view and free" in text["coffee"]
    # Each photo without a cup is one more view of evidence; the third makes it missing.
    assert "bus 0." in text["bus"]
    assert "not in view: the cup is missing only at confidence 0.50" in text["bus"]
    assert "only at confidence 0.75" in text["zidane"]
    assert "situation: the cup is missing (confidence 0.88)" in text["astronaut"]
    assert "situation: the cup is occupied: a person in it" in text["cup_with_person"]
    for image in images:
        drawn = cv2.imread(str(out / f"{image.stem}.detections.jpg"))
        assert drawn is not None and drawn.shape[:2] == cv2.imread(str(image)).shape[:2]


def test_detect_errors_are_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["detect", str(tmp_path / "missing.jpg")]) == 1
    assert "image not found" in capsys.readouterr().err

    not_an_image = tmp_path / "notes.jpg"
    not_an_image.write_text("not a picture")
    monkeypatch.setenv("COWP_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert main(["detect", str(not_an_image)]) == 1
    err = capsys.readouterr().err
    assert "no detection model" in err and "make setup" in err and "Traceback" not in err


def test_detect_refuses_unreadable_images_and_unknown_targets(
    default_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_an_image = tmp_path / "notes.jpg"
    not_an_image.write_text("not a picture")
    assert main(["detect", str(not_an_image), "--backend", "onnxruntime"]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert (
        main(["detect", str(not_an_image), "--backend", "onnxruntime", "--target", "fridge"]) == 1
    )
    assert "no class 'fridge'" in capsys.readouterr().err
