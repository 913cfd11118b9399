"""Image bags written with cowp_ros.ros.bags read back byte-exact; image bytes convert both ways."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.perception.image_encoding import bgr8_image_fields, bgr_from_image_bytes
from cowp_ros.ros.bags import IMAGE_TYPE, deserialize, read_bag, write_image_bag


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_image_bag_round_trip(tmp_path: Path, coffee: np.ndarray, storage: str) -> None:
    frames = [coffee, coffee[::-1].copy()]
    bag = write_image_bag(tmp_path / "bag", frames, fps=5.0, storage=storage)
    records = list(read_bag(bag))
    assert [r.topic for r in records] == ["/wrist_camera/image_raw"] * 2
    assert [r.msgtype for r in records] == [IMAGE_TYPE] * 2
    assert records[1].timestamp_ns - records[0].timestamp_ns == 200_000_000
    for record, frame in zip(records, frames, strict=True):
        message = deserialize(record)
        assert message.encoding == "bgr8" and message.header.frame_id == "wrist_camera"
        image = bgr_from_image_bytes(
            message.encoding, message.height, message.width, message.step, message.data.tobytes()
        )
        assert np.array_equal(image, frame)


def test_read_bag_filters_topics_and_reports_missing_bags(
    tmp_path: Path, coffee: np.ndarray
) -> None:
    bag = write_image_bag(tmp_path / "bag", [coffee])
    assert list(read_bag(bag, topics=["/other"])) == []
    with pytest.raises(CowpError, match="bag not found"):
        list(read_bag(tmp_path / "nope"))
    with pytest.raises(CowpError, match="already exists"):
        write_image_bag(bag, [coffee])


def test_image_encodings_convert_to_bgr() -> None:
    bgr = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    height, width, step, data = bgr8_image_fields(bgr)
    assert np.array_equal(bgr_from_image_bytes("bgr8", height, width, step, data), bgr)
    rgb = bgr[:, :, ::-1].tobytes()
    assert np.array_equal(bgr_from_image_bytes("rgb8", 2, 3, 9, rgb), bgr)
    padded = b"".join(bgr[row].tobytes() + b"\0\0\0" for row in range(2))  # step > width * 3
    assert np.array_equal(bgr_from_image_bytes("bgr8", 2, 3, 12, padded), bgr)
    mono = bgr_from_image_bytes("mono8", 1, 2, 2, bytes([7, 9]))
    assert mono.shape == (1, 2, 3) and mono[0, 1].tolist() == [9, 9, 9]
    with pytest.raises(CowpError, match="unsupported image encoding"):
        bgr_from_image_bytes("16UC1", 1, 1, 2, b"\0\0")
    with pytest.raises(CowpError, match="too short"):
        bgr_from_image_bytes("bgr8", 2, 3, 9, b"\0" * 10)
