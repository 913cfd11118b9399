"""Camera pictures composed of installed photos, for scenarios no single photo shows.

No photo of something in a cup ships with any package this stack installs, so a
camera scenario shows one composed of two that do: scikit-image's coffee cup with a
person from ultralytics' zidane.jpg pasted inside the cup's outline, where the default
YOLOv3-tiny model still finds both the cup and the person. Reference one as
`composite:NAME` among a scenario's camera images. Built from the installed photos at
run time (nothing is downloaded, nothing is copied into the repository); OpenCV and
ultralytics' assets come with the perception setup.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np

from cowp_ros.errors import CowpError

# The right-hand man of zidane.jpg, as the default model boxes him (person 0.90).
ZIDANE_PERSON_BOX = (723, 47, 1151, 708)
# Where, and how tall, his crop goes inside coffee's cup box (cup 0.66 at
# [150, 24, 428, 307]): at this spot the weak model still finds both the cup and him.
PASTE_TOP_LEFT = (150, 174)
PASTE_HEIGHT = 130


def ultralytics_asset(name: str) -> Path:
    """A photo ultralytics ships (`bus.jpg`, `zidane.jpg`), found without importing it
    (importing ultralytics loads torch)."""
    spec = importlib.util.find_spec("ultralytics")
    path = Path(spec.origin).parent / "assets" / name if spec and spec.origin else None
    if path is None or not path.is_file():
        raise CowpError(
            f"ultralytics' assets/{name} is not installed",
            hint="run `make setup` with the perception part (scripts/setup.d/perception.sh)",
        )
    return path


def person_in_coffee_cup() -> np.ndarray:
    """BGR: skimage's coffee cup with a real person crop pasted inside the cup's box."""
    import cv2
    from skimage import data

    coffee = cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR)
    zidane = cv2.imread(str(ultralytics_asset("zidane.jpg")))
    if zidane is None:
        raise CowpError("OpenCV cannot read ultralytics' assets/zidane.jpg")
    x1, y1, x2, y2 = ZIDANE_PERSON_BOX
    crop = zidane[y1:y2, x1:x2]
    scale = PASTE_HEIGHT / crop.shape[0]
    crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    left, top = PASTE_TOP_LEFT
    composite = coffee.copy()
    composite[top : top + crop.shape[0], left : left + crop.shape[1]] = crop
    return composite


COMPOSITES: dict[str, Callable[[], np.ndarray]] = {
    "person_in_coffee_cup": person_in_coffee_cup,
}


def composite_rgb(name: str) -> np.ndarray:
    """The named composite as an RGB picture (what the camera streams)."""
    make = COMPOSITES.get(name)
    if make is None:
        raise CowpError(
            f"no composite picture {name!r}", hint=f"composites: {', '.join(sorted(COMPOSITES))}"
        )
    return np.ascontiguousarray(make()[..., ::-1])
