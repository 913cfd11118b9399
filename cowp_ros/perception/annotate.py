"""Draw detections and situations onto a frame, for rviz and for `cowp detect --out`."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from cowp_ros.perception.detections import Detection

TARGET_COLOUR = (0, 200, 0)  # BGR: the object the plan step is about
OTHER_COLOUR = (255, 160, 0)
SITUATION_COLOUR = (0, 0, 255)


def annotate(
    image_bgr: np.ndarray,
    detections: Sequence[Detection],
    target_class: str = "",
    situation_texts: Sequence[str] = (),
) -> np.ndarray:
    """A copy of the frame with labelled boxes (target in green) and situations on top."""
    canvas = image_bgr.copy()
    scale = max(0.4, min(canvas.shape[:2]) / 800)
    thickness = max(1, round(2 * scale))
    for detection in detections:
        colour = TARGET_COLOUR if detection.class_name == target_class else OTHER_COLOUR
        top_left = (round(detection.x_min), round(detection.y_min))
        cv2.rectangle(
            canvas, top_left, (round(detection.x_max), round(detection.y_max)), colour, thickness
        )
        label = f"{detection.class_name} {detection.confidence:.2f}"
        (width, height), baseline = cv2.getTextSize(
            label, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness
        )
        label_top = max(0, top_left[1] - height - baseline)
        cv2.rectangle(
            canvas,
            (top_left[0], label_top),
            (top_left[0] + width, label_top + height + baseline),
            colour,
            -1,
        )
        cv2.putText(
            canvas, label, (top_left[0], label_top + height), cv2.FONT_HERSHEY_SIMPLEX, scale,
            (255, 255, 255), thickness, cv2.LINE_AA,
        )  # fmt: skip
    line_height = round(30 * scale)
    for row, text in enumerate(situation_texts, start=1):
        cv2.putText(
            canvas, text, (10, row * line_height), cv2.FONT_HERSHEY_SIMPLEX, scale,
            SITUATION_COLOUR, thickness + 1, cv2.LINE_AA,
        )  # fmt: skip
    return canvas
