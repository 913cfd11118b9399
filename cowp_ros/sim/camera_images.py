"""Images for the simulated wrist camera: real photographs where they are installed.

A scenario lists its camera images as `skimage:NAME` (a picture that ships with
scikit-image, e.g. `skimage:coffee`, a real cup on a saucer), `composite:NAME` (one
composed of installed photos, `composites.py`) or a file path relative to the
package's share folder. Pictures that cannot be loaded are reported and replaced by
a plain grey frame, so the camera stream never stops: the situation detector then sees
nothing, which is what it would see from a camera pointed at a blank wall.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from cowp_ros.resources import share_path

LOG = logging.getLogger(__name__)
BLANK_SHAPE = (480, 640, 3)


def load_camera_image(reference: str) -> tuple[np.ndarray, str]:
    """An RGB uint8 image for `reference`, and a note on where it came from."""
    try:
        if reference.startswith("composite:"):
            from cowp_ros.sim.composites import composite_rgb

            image = composite_rgb(reference.split(":", 1)[1])
        elif reference.startswith("skimage:"):
            from skimage import data

            image = getattr(data, reference.split(":", 1)[1])()
        else:
            path = Path(reference)
            path = path if path.is_absolute() else share_path(reference)
            from PIL import Image

            with Image.open(path) as opened:
                image = np.asarray(opened.convert("RGB"))
    except Exception as err:  # any loader failure means: no picture, keep streaming
        LOG.warning("camera image %s unavailable (%s); streaming a blank frame", reference, err)
        return np.full(BLANK_SHAPE, 128, dtype=np.uint8), f"blank (no {reference})"
    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    return np.ascontiguousarray(image[..., :3].astype(np.uint8)), reference
