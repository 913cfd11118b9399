"""Missing/occupied rules, evidence over frames and debouncing, on recorded detections
and on real photos."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.perception.class_names import ModelClasses
from cowp_ros.perception.detections import Detection
from cowp_ros.perception.detectors import create_detector
from cowp_ros.perception.situation_tracker import (
    MissingEvidence,
    SituationTracker,
    view_signature,
)
from cowp_ros.perception.situations import (
    DEFAULT_OBJECT_CLASSES,
    MISSING,
    OCCUPIED,
    FrameSituation,
    ObjectClassMap,
    SituationDebouncer,
    Target,
    describe_unwatchable,
    merge_duplicates,
    occupants,
    occupied_in_frame,
)

# The default model's classes, as its Darknet coco.names spells them.
DARKNET_CLASSES = ModelClasses(
    ["person", "car", "truck", "sofa", "diningtable", "tvmonitor", "cup", "bowl", "fork"]
)
ULTRALYTICS_CLASSES = ModelClasses(["person", "car", "couch", "dining table", "tv", "cup"])

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
# Debian darknet dog.jpg: one pickup boxed as car and as truck, twice.
DOG_JPG = [
    Detection("dog", 0.70, 111, 216, 341, 529),
    Detection("car", 0.67, 531, 90, 624, 156),
    Detection("car", 0.59, 460, 80, 685, 164),
    Detection("truck", 0.41, 460, 80, 685, 164),
    Detection("bicycle", 0.39, 219, 162, 560, 447),
    Detection("truck", 0.39, 531, 90, 624, 156),
]
# Debian darknet giraffe.jpg: a zebra standing in front of the giraffe.
GIRAFFE_JPG = [
    Detection("zebra", 0.53, 305, 205, 415, 448),
    Detection("giraffe", 0.52, 154, 0, 439, 463),
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
    known = ModelClasses(["cup", "person", "sink"])
    assert mapping.target_in_step(["faucet_1", "mug_1"], known) == Target("mug_1", "cup")
    assert mapping.target_in_step(["cup_1", "sink_1"], known) == Target("cup_1", "cup")
    assert mapping.target_in_step(["robot", "kitchen_1"], known) is None


@pytest.mark.parametrize(
    ("model", "table", "sofa"),
    [(DARKNET_CLASSES, "diningtable", "sofa"), (ULTRALYTICS_CLASSES, "dining table", "couch")],
)
def test_classes_are_spelled_as_the_model_spells_them(
    model: ModelClasses, table: str, sofa: str
) -> None:
    """Darknet's coco.names and ultralytics spell some COCO classes differently; the
    table and the sofa must be watched whichever model runs."""
    mapping = ObjectClassMap.from_entries(DEFAULT_OBJECT_CLASSES)
    assert mapping.target_for("table_1", model) == Target("table_1", table)
    assert mapping.target_for("sofa_1", model) == Target("sofa_1", sofa)
    assert mapping.target_for("couch_2", model) == Target("couch_2", sofa)
    assert mapping.target_for("mug_1", model) == Target("mug_1", "cup")


def test_objects_the_model_cannot_watch_are_named_by_kind() -> None:
    mapping = ObjectClassMap.from_entries(DEFAULT_OBJECT_CLASSES)
    objects = ["cup_1", "plate_1", "plate_2", "faucet_1", "table_1", "sofa_1"]
    objects += [f"bolt_{n}" for n in range(1, 11)]
    unwatchable = mapping.unwatchable(objects, DARKNET_CLASSES)
    assert unwatchable == {
        "bolt": [f"bolt_{n}" for n in sorted(range(1, 11), key=str)],
        "faucet": ["faucet_1"],
        "plate": ["plate_1", "plate_2"],
    }
    assert describe_unwatchable(unwatchable) == (
        "bolt (10 objects), faucet (faucet_1), plate (plate_1, plate_2)"
    )


def test_class_map_rejects_malformed_entries() -> None:
    with pytest.raises(CowpError, match="pddl_name=class"):
        ObjectClassMap.from_entries(["cup"])


def test_cup_present_and_free_is_no_situation() -> None:
    assert occupied_in_frame(COFFEE, CUP) is None
    frame, reports = SituationTracker().update(COFFEE, CUP)
    assert frame == [] and reports == []


def _view(level: int) -> np.ndarray:
    """A distinct camera view: a flat grey picture of its own brightness."""
    return np.full((48, 64, 3), level, np.uint8)


def test_missing_needs_evidence_from_several_distinct_views() -> None:
    tracker = SituationTracker()
    # One frame without the cup is a guess from a weak model, not a report.
    frame, reports = tracker.update(PERSON_JPG, CUP, view_signature(_view(10)))
    assert [(s.kind, s.text) for s in frame] == [(MISSING, "the cup is missing")]
    assert frame[0].confidence == pytest.approx(0.5) and reports == []
    # The same view again (a still camera) adds nothing, however often it comes.
    for _ in range(10):
        _, reports = tracker.update(PERSON_JPG, CUP, view_signature(_view(12)))
        assert reports == []
    assert tracker.missing.views == 1
    _, reports = tracker.update(PERSON_JPG, CUP, view_signature(_view(60)))
    assert reports == []
    _, reports = tracker.update(PERSON_JPG, CUP, view_signature(_view(120)))
    (missing,) = reports
    assert (missing.kind, missing.object_name, missing.text) == (
        MISSING,
        "cup_1",
        "the cup is missing",
    )
    assert missing.confidence == pytest.approx(1 - 0.5**3)
    # Reported once; a sighting clears the evidence.
    assert tracker.update(PERSON_JPG, CUP, view_signature(_view(200)))[1] == []
    assert tracker.update(COFFEE, CUP, view_signature(_view(200))) == ([], [])
    assert tracker.missing.views == 0


def test_an_object_in_the_gripper_is_never_missing() -> None:
    tracker = SituationTracker()
    for level in range(0, 250, 25):
        frame, reports = tracker.update(PERSON_JPG, CUP, view_signature(_view(level)), held=True)
        assert frame == [] and reports == []


def test_missing_evidence_validates_its_settings() -> None:
    with pytest.raises(CowpError, match="view_recall"):
        MissingEvidence(view_recall=1.0)


def test_object_inside_the_cup_box_makes_it_occupied() -> None:
    situation = occupied_in_frame(CUP_WITH_PERSON, CUP)
    assert situation is not None and situation.kind == OCCUPIED
    assert situation.text == "the cup is occupied: a person in it"
    assert situation.confidence == pytest.approx(0.65)  # the weaker of cup and occupant


@pytest.mark.parametrize(
    ("detections", "target"),
    [
        (GIRAFFE_JPG, Target("giraffe_1", "giraffe")),  # a zebra in front of it
        (DOG_JPG, Target("truck_1", "truck")),  # its own car box
        (DOG_JPG, Target("car_1", "car")),
        (ZIDANE, Target("person_1", "person")),  # his own tie
        (PERSON_JPG, Target("dog_1", "dog")),
    ],
)
def test_only_containers_are_occupied(detections: list[Detection], target: Target) -> None:
    assert occupied_in_frame(detections, target) is None


def test_one_objects_boxes_of_different_classes_are_merged() -> None:
    merged = merge_duplicates(DOG_JPG)
    assert sorted(d.describe() for d in merged) == sorted(
        d.describe() for d in [DOG_JPG[0], DOG_JPG[1], DOG_JPG[2], DOG_JPG[4]]
    )
    # The class asked for wins its group, even when the other class was surer.
    assert {d.class_name for d in merge_duplicates(DOG_JPG, keep_class="truck")} == {
        "dog",
        "truck",
        "bicycle",
    }
    # A bowl box on the cup's own outline does not fill the cup.
    bowl_on_cup = Detection("bowl", 0.7, 152, 30, 425, 300)
    assert occupied_in_frame([*COFFEE, bowl_on_cup], CUP) is None


def test_same_class_and_larger_boxes_do_not_occupy() -> None:
    dog = PERSON_JPG[1]
    assert occupants(dog, PERSON_JPG) == []  # the smaller dog box is the same dog
    table = Detection("dining table", 0.8, 0, 0, 600, 400)
    assert occupants(COFFEE[0], [*COFFEE, table]) == []  # the table holds the cup


def test_occupied_threshold_on_a_partly_overlapping_box() -> None:
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
    tracker = SituationTracker()
    assert tracker.update(detector.detect(coffee), CUP, view_signature(coffee)) == ([], [])
    (missing,), _ = tracker.update(detector.detect(bus), CUP, view_signature(bus))
    assert missing.kind == MISSING and missing.confidence == pytest.approx(0.5)
    occupied = occupied_in_frame(detector.detect(cup_with_person_inside), CUP)
    assert occupied is not None and occupied.kind == OCCUPIED and "person" in occupied.text
    assert 0.3 < occupied.confidence <= 1.0
