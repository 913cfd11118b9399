"""sensor_msgs/Image bytes <-> numpy arrays, without cv_bridge (not on PyPI for Kilted).

Detectors take BGR uint8 arrays (OpenCV's and ultralytics' convention for numpy frames).
Only the 8-bit encodings cameras actually send are accepted; anything else is refused
with the encoding named, rather than guessed.
"""

from __future__ import annotations

import numpy as np

from cowp_ros.errors import CowpError

# encoding -> (channels, conversion to BGR as a channel index order, or None for mono)
_CHANNELS_TO_BGR: dict[str, tuple[int, tuple[int, ...] | None]] = {
    "bgr8": (3, (0, 1, 2)),
    "rgb8": (3, (2, 1, 0)),
    "bgra8": (4, (0, 1, 2)),
    "rgba8": (4, (2, 1, 0)),
    "mono8": (1, None),
}
SUPPORTED_ENCODINGS = tuple(_CHANNELS_TO_BGR)


def bgr_from_image_bytes(
    encoding: str, height: int, width: int, step: int, data: bytes | bytearray | memoryview
) -> np.ndarray:
    """A BGR uint8 array (height x width x 3) from the fields of a sensor_msgs/Image."""
    layout = _CHANNELS_TO_BGR.get(encoding.lower())
    if layout is None:
        raise CowpError(
            f"unsupported image encoding {encoding!r}",
            hint=f"publish one of {', '.join(SUPPORTED_ENCODINGS)}",
        )
    channels, order = layout
    buffer = np.frombuffer(data, dtype=np.uint8)
    if step < width * channels or buffer.size < step * height:
        raise CowpError(
            f"image data too short for {width}x{height} {encoding} "
            f"(step {step}, {buffer.size} bytes)"
        )
    rows = buffer[: step * height].reshape(height, step)[:, : width * channels]
    pixels = rows.reshape(height, width, channels)
    if order is None:
        return np.repeat(pixels, 3, axis=2)
    return np.ascontiguousarray(pixels[:, :, list(order)])


def bgr8_image_fields(image: np.ndarray) -> tuple[int, int, int, bytes]:
    """(height, width, step, data) of a BGR uint8 array, ready for a bgr8 sensor_msgs/Image."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected a BGR uint8 image, got {image.dtype} {image.shape}")
    height, width = image.shape[:2]
    return height, width, width * 3, np.ascontiguousarray(image).tobytes()
