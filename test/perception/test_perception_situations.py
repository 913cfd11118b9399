"""Missing/occupied rules and debouncing, on recorded detections and on real photos."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.perception.detections import Detection
from cowp_ros.perception.detectors import create_detector
from cowp_ros.perception.situations import (
    MISSING,
    OCCUPIED,
    FrameSituation,
    ObjectClassMap,
    SituationDebouncer,
    Target,
    occupants,
    situations_in_frame,
)

CUP = Target("cup_1", "cup")

# Recorded from the default model (onnxruntime, 416 px) on real photos.
COFFEE = [Detection("cup", 0.66, 150, 24, 428, 307)]
# Debian darknet person.jpg: a second, smaller dog box inside the first (the same dog).
PERSON_JPG = [
    Detection("person", 0.95, 188, 104, 276, 382),
    Detection("dog", 0.94, 72, 266, 200, 353),
    Detection("horse", 0.92, 399, 137, 604, 330),
    Detection("dog", 0.91, 107, 279, 168, 333),
    Detection("sheep", 0.32, 400, 140, 598, 341),
]
# The coffee cup with a real person crop pasted inside its box (see conftest.py).
CUP_WITH_PERSON = [
    Detection("person", 0.70, 155, 176, 245, 309),
    Detection("cup", 0.65, 158, 24, 428, 302),
    Detection("person", 0.64, 178, 197, 216, 289),
]
# zidane.jpg: the left man's box holds his tie.
ZIDANE = [
    Detection("person", 0.90, 723, 47, 1151, 708),
    Detection("tie", 0.35, 448, 485, 494, 600),
    Detection("person", 0.35, 126, 174, 741, 706),
    Detection("tie", 0.26, 1004, 336, 1025, 395),
]


def test_class_map_explicit_entries_then_suffix_stripping() -> None:
    mapping = ObjectClassMap.from_entries(["mug=cup", "table_2=dining table"])
    assert mapping.class_for("cup_1") == "cup"
    assert mapping.class_for("mug_3") == "cup"
    assert mapping.class_for("table_2") == "dining table"
    assert mapping.class_for("table_1") == "table"
    assert mapping.class_for("wine_glass_1") == "wine glass"


def test_class_map_picks_the_first_step_argument_the_detector_knows() -> None:
    mapping = ObjectClassMap.from_entries(["mug=cup"])
    known = {"cup", "person", "sink"}
    assert mapping.target_in_step(["faucet_1", "mug_1"], known) == "mug_1"
    assert mapping.target_in_step(["cup_1", "sink_1"], known) == "cup_1"
    assert mapping.target_in_step(["robot", "kitchen_1"], known) is None


def test_class_map_rejects_malformed_entries() -> None:
    with pytest.raises(CowpError, match="pddl_name=class"):
        ObjectClassMap.from_entries(["cup"])


def test_cup_present_and_free_is_no_situation() -> None:
    assert situations_in_frame(COFFEE, CUP) == []


def test_cup_missing_from_a_recorded_frame() -> None:
    (situation,) = situations_in_frame(PERSON_JPG, CUP)
    assert situation.kind == MISSING
    assert situation.object_name == "cup_1"
    assert situation.text == "the cup is missing"


def test_object_inside_the_cup_box_makes_it_occupied() -> None:
    (situation,) = situations_in_frame(CUP_WITH_PERSON, CUP)
    assert situation.kind == OCCUPIED
    assert situation.text == "the cup is occupied: a person in it"
    assert situation.confidence == pytest.approx(0.65)  # the weaker of cup and occupant


def test_same_class_and_larger_boxes_do_not_occupy() -> None:
    dog = PERSON_JPG[1]
    assert occupants(dog, PERSON_JPG) == []  # the smaller dog box is the same dog
    table = Detection("dining table", 0.8, 0, 0, 600, 400)
    assert occupants(COFFEE[0], [*COFFEE, table]) == []  # the table holds the cup


def test_occupied_threshold_on_a_partly_overlapping_box() -> None:
    person = Target("person_1", "person")
    # The left man's tie lies wholly in his box; the right man's tie is in his own box.
    (situation,) = situations_in_frame(ZIDANE, person)
    assert situation.text == "the person is occupied: a tie in it"
    half_out = Detection("fork", 0.5, 400, 100, 456, 150)  # half of it right of the cup
    assert occupants(COFFEE[0], [half_out], min_inside=0.6) == []
    assert occupants(COFFEE[0], [half_out], min_inside=0.4) == [half_out]


def _frame(kind: str | None, confidence: float = 0.8) -> list[FrameSituation]:
    return [FrameSituation(kind, "cup_1", f"the cup is {kind}", confidence)] if kind else []


def test_debouncer_needs_min_frames_of_the_window_and_reports_once() -> None:
    debouncer = SituationDebouncer(window_frames=5, min_frames=3)
    reports = [debouncer.update(_frame(k)) for k in (MISSING, None, MISSING, MISSING, MISSING)]
    assert [len(r) for r in reports] == [0, 0, 0, 1, 0]
    assert reports[3][0].confidence == pytest.approx(3 / 5 * 0.8)


def test_debouncer_ignores_flicker_and_rearms_after_clearing() -> None:
    debouncer = SituationDebouncer(window_frames=4, min_frames=3)
    flicker = [MISSING, None, None, MISSING, None, None, MISSING]
    assert all(debouncer.update(_frame(k)) == [] for k in flicker)
    debouncer.reset()
    assert [len(debouncer.update(_frame(OCCUPIED))) for _ in range(3)] == [0, 0, 1]
    for _ in range(4):
        assert debouncer.update([]) == []  # cleared for a whole window
    assert [len(debouncer.update(_frame(OCCUPIED))) for _ in range(3)] == [0, 0, 1]


def test_debouncer_validates_its_window() -> None:
    with pytest.raises(CowpError):
        SituationDebouncer(window_frames=2, min_frames=3)


@pytest.mark.parametrize("backend", ["ultralytics", "onnxruntime"])
def test_rules_on_real_photos(
    backend: str,
    default_model: Path,
    coffee: np.ndarray,
    bus: np.ndarray,
    cup_with_person_inside: np.ndarray,
) -> None:
    """The weak 2018 model on real pixels: free cup, no cup, something in the cup."""
    detector = create_detector(backend, str(default_model))
    assert situations_in_frame(detector.detect(coffee), CUP) == []
    (missing,) = situations_in_frame(detector.detect(bus), CUP)
    assert missing.kind == MISSING
    detections = detector.detect(cup_with_person_inside)
    (occupied,) = situations_in_frame(detections, CUP)
    assert occupied.kind == OCCUPIED and "person" in occupied.text
    assert 0.3 < occupied.confidence <= 1.0
