"""Situations over a stream of frames: what the node reports, and with what confidence.

Occupied is seen in a frame and debounced (`SituationDebouncer`). Missing is an
absence, and an absence in one frame says little: YOLOv3-tiny misses a cat in a plain
photo of a cat, on every frame of it. So missing is a belief built from evidence:

- only distinct views count: the same picture again (a still camera, a replayed
  photo) adds nothing, since a detector that missed the object once misses it again;
- each distinct view without the target multiplies the chance that a present object
  went unseen by (1 - `view_recall`): after n views the confidence that it is missing is
  1 - (1 - view_recall)^n, reported once it reaches `min_confidence` (with the defaults,
  0.5 and 0.85, at the third distinct view);
- one sighting of the target clears the evidence;
- an object in the gripper is never missing: the wrist camera looks past what the hand
  holds, and the robot knows where it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cowp_ros.errors import CowpError
from cowp_ros.perception.detections import Detection
from cowp_ros.perception.situations import (
    MISSING,
    FrameSituation,
    SituationDebouncer,
    Target,
    best_of_class,
    missing_text,
    occupied_in_frame,
)

VIEW_GRID = 16  # a view's signature: the mean grey level of 16 x 16 cells
NEW_VIEW_MIN_CHANGE = 6.0  # grey levels (0..255), mean over the cells: a different view


def view_signature(image_bgr: np.ndarray) -> np.ndarray:
    """A coarse fingerprint of what the camera sees: sensor noise and compression leave
    it alone, a moved camera or a changed scene does not."""
    grey = np.asarray(image_bgr, dtype=np.float32)
    if grey.ndim == 3:
        grey = grey.mean(axis=2)
    rows = np.array_split(np.arange(grey.shape[0]), VIEW_GRID)
    columns = np.array_split(np.arange(grey.shape[1]), VIEW_GRID)
    return np.array(
        [[grey[np.ix_(r, c)].mean() if r.size and c.size else 0.0 for c in columns] for r in rows],
        dtype=np.float32,
    )


class MissingEvidence:
    """Distinct views without the target, and the confidence they give that it is missing."""

    def __init__(self, view_recall: float = 0.5, min_confidence: float = 0.85) -> None:
        if not 0.0 < view_recall < 1.0 or not 0.0 < min_confidence < 1.0:
            raise CowpError(
                "missing evidence needs 0 < view_recall < 1 and 0 < min_confidence < 1, "
                f"got {view_recall} and {min_confidence}"
            )
        self.view_recall = view_recall
        self.min_confidence = min_confidence
        self._views: list[np.ndarray] = []
        self.reported = False

    def reset(self) -> None:
        """Forget the views (the target was seen, changed, or is in the hand)."""
        self._views.clear()
        self.reported = False

    @property
    def views(self) -> int:
        return len(self._views)

    @property
    def confidence(self) -> float:
        return 1.0 - (1.0 - self.view_recall) ** len(self._views)

    def absent_in(self, signature: np.ndarray | None) -> float:
        """One more frame without the target; the confidence now. A frame without a
        signature (single photos in a benchmark) is always a distinct view."""
        if signature is None or all(
            float(np.abs(signature - seen).mean()) >= NEW_VIEW_MIN_CHANGE for seen in self._views
        ):
            self._views.append(signature if signature is not None else np.zeros(1, np.float32))
        return self.confidence


@dataclass(frozen=True)
class TrackerSettings:
    """The node's parameters for judging situations over frames."""

    window_frames: int = 5
    min_frames: int = 3
    occupied_min_inside: float = 0.6
    missing_view_recall: float = 0.5
    missing_min_confidence: float = 0.85


class SituationTracker:
    """One target's frames in; this frame's situations (for drawing) and new reports out."""

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self.debouncer = SituationDebouncer(self.settings.window_frames, self.settings.min_frames)
        self.missing = MissingEvidence(
            self.settings.missing_view_recall, self.settings.missing_min_confidence
        )

    def reset(self) -> None:
        """Another target: evidence about the old one says nothing of the new."""
        self.debouncer.reset()
        self.missing.reset()

    def update(
        self,
        detections: Sequence[Detection],
        target: Target,
        signature: np.ndarray | None = None,
        held: bool = False,
    ) -> tuple[list[FrameSituation], list[FrameSituation]]:
        """(what this frame shows, what just became reportable)."""
        frame: list[FrameSituation] = []
        reports: list[FrameSituation] = []
        if held or best_of_class(detections, target.class_name) is not None:
            self.missing.reset()
        else:
            confidence = self.missing.absent_in(signature)
            missing = FrameSituation(MISSING, target.object_name, missing_text(target), confidence)
            frame.append(missing)
            if confidence >= self.missing.min_confidence and not self.missing.reported:
                self.missing.reported = True
                reports.append(missing)
        occupied = occupied_in_frame(detections, target, self.settings.occupied_min_inside)
        occupied_frame = [occupied] if occupied is not None else []
        frame.extend(occupied_frame)
        reports.extend(self.debouncer.update(occupied_frame))
        return frame, reports
