"""Both detector backends on real photos: the expected classes, the same boxes, clear errors."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.perception.detections import Detection
from cowp_ros.perception.detectors import BACKENDS, Detector, create_detector


@pytest.fixture(scope="module", params=BACKENDS)
def detector(request: pytest.FixtureRequest, default_model: Path) -> Detector:
    return create_detector(request.param, str(default_model), imgsz=416, confidence=0.25)


def classes(detections: list[Detection]) -> set[str]:
    return {d.class_name for d in detections}


def test_finds_the_cup_in_skimage_coffee(detector: Detector, coffee: np.ndarray) -> None:
    detections = detector.detect(coffee)
    cups = [d for d in detections if d.class_name == "cup"]
    assert cups, detections
    cup = cups[0]
    # The cup fills the middle of the 600 x 400 photo.
    assert cup.confidence > 0.5
    assert 100 < cup.x_min < 200 and 380 < cup.x_max < 480
    assert cup.y_min < 60 and 260 < cup.y_max < 360


def test_finds_people_and_the_bus(detector: Detector, bus: np.ndarray) -> None:
    detections = detector.detect(bus)
    assert {"person", "bus"} <= classes(detections)
    assert sum(d.class_name == "person" for d in detections) >= 3
    assert "cup" not in classes(detections)


def test_finds_people_in_zidane(detector: Detector, zidane: np.ndarray) -> None:
    people = [d for d in detector.detect(zidane) if d.class_name == "person"]
    assert people and people[0].confidence > 0.8


def test_debian_darknet_photos(detector: Detector, darknet_images: Path) -> None:
    dog = detector.detect(cv2.imread(str(darknet_images / "dog.jpg")))
    assert {"dog", "bicycle"} <= classes(dog)
    assert classes(dog) & {"car", "truck"}
    person = detector.detect(cv2.imread(str(darknet_images / "person.jpg")))
    assert {"person", "dog", "horse"} <= classes(person)


@pytest.mark.parametrize("imgsz", [320, 640])
def test_other_input_sizes_still_find_the_cup(
    default_model: Path, coffee: np.ndarray, imgsz: int
) -> None:
    for backend in BACKENDS:
        detector = create_detector(backend, str(default_model), imgsz=imgsz)
        assert "cup" in classes(detector.detect(coffee)), (backend, imgsz)


def test_backends_agree_box_for_box(
    default_model: Path, bus: np.ndarray, coffee: np.ndarray
) -> None:
    """Same model, same letterbox: the torch-free backend is a drop-in replacement."""
    ultralytics = create_detector("ultralytics", str(default_model))
    onnxruntime = create_detector("onnxruntime", str(default_model))
    for image in (bus, coffee):
        a, b = ultralytics.detect(image), onnxruntime.detect(image)
        assert [d.class_name for d in a] == [d.class_name for d in b]
        for x, y in zip(a, b, strict=True):
            assert abs(x.confidence - y.confidence) < 0.01
            assert np.allclose(
                [x.x_min, x.y_min, x.x_max, x.y_max], [y.x_min, y.y_min, y.x_max, y.y_max], atol=2.0
            )


def test_onnxruntime_backend_never_imports_torch(default_model: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys, numpy as np\n"
        "from cowp_ros.perception.detectors import create_detector\n"
        f"d = create_detector('onnxruntime', {str(default_model)!r})\n"
        "d.detect(np.zeros((240, 320, 3), np.uint8))\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_ultralytics_backend_never_imports_torchvision(default_model: Path) -> None:
    """PyPI's torchvision is a CUDA build that breaks on the CPU torch: it must stay out."""
    import subprocess
    import sys

    script = (
        "import sys, numpy as np\n"
        "from cowp_ros.perception.detectors import create_detector\n"
        f"d = create_detector('ultralytics', {str(default_model)!r})\n"
        "d.detect(np.zeros((240, 320, 3), np.uint8))\n"
        "print('torchvision' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_missing_default_model_says_run_make_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COWP_CACHE_DIR", str(tmp_path))
    with pytest.raises(CowpError, match="no detection model") as error:
        create_detector("onnxruntime")
    assert "make setup" in str(error.value)


def test_missing_named_model_is_never_downloaded(tmp_path: Path) -> None:
    with pytest.raises(CowpError, match="never downloaded"):
        create_detector("ultralytics", str(tmp_path / "yolo11n.pt"))


def test_bad_arguments_are_refused(default_model: Path) -> None:
    with pytest.raises(CowpError, match="multiple of 32"):
        create_detector("onnxruntime", str(default_model), imgsz=300)
    with pytest.raises(CowpError, match="between 0 and 1"):
        create_detector("onnxruntime", str(default_model), confidence=1.5)
    with pytest.raises(CowpError, match="unknown detector backend"):
        create_detector("tensorrt", str(default_model))


def test_onnxruntime_refuses_a_model_without_nms_inside(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["images"], ["output0"])],
        "plain",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 3, 32, 32])],
    )
    path = tmp_path / "plain.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, path)
    with pytest.raises(CowpError, match="not an end-to-end detector"):
        create_detector("onnxruntime", str(path))


def test_a_users_own_pt_model_loads_or_says_what_is_missing(tmp_path: Path) -> None:
    """Any ultralytics model can be named; a .pt needs torchvision, broken on PyPI's CPU stack.

    The model is built from ultralytics' own yolo11n.yaml (random weights, no download).
    """
    import os

    os.environ.setdefault("YOLO_OFFLINE", "true")
    ultralytics = pytest.importorskip("ultralytics")
    path = tmp_path / "users-own.pt"
    ultralytics.YOLO("yolo11n.yaml").save(str(path))
    detector = create_detector("ultralytics", str(path))
    assert len(detector.class_names) == 80  # its class names are placeholders until trained
    try:
        detections = detector.detect(np.zeros((240, 320, 3), np.uint8))
    except CowpError as error:
        assert "torchvision" in str(error) and "nms=True" in str(error)
    else:
        assert all(isinstance(d, Detection) for d in detections)
