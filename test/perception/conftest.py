"""Real images and the provisioned model for the perception tests.

Images come from installed packages (skimage's coffee cup, ultralytics' bus and zidane)
and, when setup could fetch Debian's darknet package, its sample photos in the cache.
The model is the one `make setup` converts; a missing model fails the tests (with the
fix in the message) unless setup was told to skip perception.
"""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from cowp_ros.perception.models import cache_dir, default_model_path

# Before anything imports ultralytics: it probes DNS at import unless told it is offline.
os.environ.setdefault("YOLO_OFFLINE", "true")
os.environ.setdefault("YOLO_VERBOSE", "false")

ULTRALYTICS_ASSETS_MISSING = "ultralytics is not installed (perception setup skipped?)"


def _perception_skipped() -> bool:
    return "perception" in os.environ.get("COWP_SETUP_SKIP", "").split(",")


@pytest.fixture(scope="session")
def default_model() -> Path:
    """The provisioned COCO YOLOv3-tiny ONNX model."""
    path = default_model_path()
    if not path.is_file():
        if _perception_skipped():
            pytest.skip("perception setup skipped (COWP_SETUP_SKIP)")
        pytest.fail(f"no model at {path}: run `make setup` (scripts/setup.d/perception.sh)")
    return path


def _ultralytics_asset(name: str) -> np.ndarray:
    ultralytics = pytest.importorskip("ultralytics", reason=ULTRALYTICS_ASSETS_MISSING)
    image = cv2.imread(str(Path(ultralytics.__file__).parent / "assets" / name))
    assert image is not None, f"ultralytics ships assets/{name}"
    return image


@pytest.fixture(scope="session")
def coffee() -> np.ndarray:
    """skimage's coffee photo (BGR): one real cup on a saucer."""
    data = pytest.importorskip("skimage.data")
    return cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR)


@pytest.fixture(scope="session")
def astronaut() -> np.ndarray:
    """skimage's astronaut photo (BGR): a portrait, no cup (the model finds nothing)."""
    data = pytest.importorskip("skimage.data")
    return cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)


@pytest.fixture(scope="session")
def bus() -> np.ndarray:
    """ultralytics' bus.jpg: people in front of a bus, no cup."""
    return _ultralytics_asset("bus.jpg")


@pytest.fixture(scope="session")
def zidane() -> np.ndarray:
    """ultralytics' zidane.jpg: two men in suits."""
    return _ultralytics_asset("zidane.jpg")


@pytest.fixture(scope="session")
def cup_with_person_inside() -> np.ndarray:
    """A composite of two real photos: a real person crop pasted inside the cup's box
    (what the camera scenario streams too, `cowp_ros/sim/composites.py`).

    Stands in for "a fork in the cup": no photo of cutlery in a cup is installable
    here, and YOLOv3-tiny does not find the cup once a large object covers its middle.
    """
    pytest.importorskip("ultralytics", reason=ULTRALYTICS_ASSETS_MISSING)
    from cowp_ros.sim.composites import person_in_coffee_cup

    return person_in_coffee_cup()


@pytest.fixture(scope="session")
def darknet_images() -> Path:
    """Debian darknet's sample photos, when setup could fetch them."""
    folder = cache_dir() / "test-images" / "darknet"
    if not (folder / "dog.jpg").is_file():
        pytest.skip(f"Debian darknet images not provisioned in {folder} (apt unavailable?)")
    return folder
