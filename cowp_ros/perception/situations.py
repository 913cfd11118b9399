"""From detections of the current target object to situations the planner can act on.

The plan names objects the PDDL way (`cup_1`); the detector names COCO classes (`cup`).
`ObjectClassMap` bridges the two from configuration, with a fallback that strips the
instance number (`wine_glass_2` -> `wine glass`), and looks the class up in the model's
own names in either COCO spelling (`class_names`): an object whose class the model does
not have is said to be unwatchable, never silently ignored.

Two situations are derived for the object the current plan step uses:

- occupied (per frame, `occupied_in_frame`): the target is a container (cup, mug, bowl,
  glass, vase) and a smaller object's box lies (mostly) inside its box, e.g. a fork in
  the cup. A person, a truck or a giraffe holds nothing: what lies in their boxes is
  beside or in front of them. Boxes of one object under different classes (a pickup
  boxed as truck and as car) are merged first, the target's class winning, so an object
  never occupies itself; same-class boxes and larger boxes never occupy.
- missing (over frames, `situation_tracker.MissingEvidence`): the target was not seen in
  several distinct views; one frame without a box is weak evidence from a weak model.

A single frame lies often (motion blur, a hand passing by), so `SituationDebouncer`
reports a situation only when it held in `min_frames` of the last `window_frames`
frames, once per onset: it is reported again only after it has cleared.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cowp_ros.errors import CowpError
from cowp_ros.perception.class_names import ModelClasses, class_key
from cowp_ros.perception.detections import Detection

MISSING = "missing"
OCCUPIED = "occupied"
# PDDL names (without _N) in this repository's domains -> COCO classes, where they differ
# (either COCO spelling: the model's own is looked up).
DEFAULT_OBJECT_CLASSES = (
    "mug=cup",
    "glass=cup",
    "table=dining table",
    "sofa=couch",
    "stool=chair",
    "coke=bottle",
    "burger=sandwich",
    "beer=bottle",
    "juice=bottle",
    "milk=bottle",
)
# Classes that can hold another object inside their outline, as a cup holds a spoon.
CONTAINER_CLASSES = frozenset({"cup", "mug", "bowl", "glass", "wine glass", "vase"})
# Boxes overlapping this much (intersection over union) are one object.
DUPLICATE_IOU = 0.6
_INSTANCE_SUFFIX = re.compile(r"_\d+$")


@dataclass(frozen=True)
class ObjectClassMap:
    """PDDL object names (or their types) -> detector class names."""

    explicit: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> ObjectClassMap:
        """Parse `name=class` entries (the node's string-array parameter form)."""
        mapping: dict[str, str] = {}
        for entry in entries:
            name, separator, class_name = entry.partition("=")
            if not separator or not name.strip() or not class_name.strip():
                raise CowpError(
                    f"object class entry {entry!r} is not of the form pddl_name=class",
                    hint="e.g. cup_1=cup or mug=cup",
                )
            mapping[name.strip().lower()] = class_name.strip()
        return cls(mapping)

    def class_for(self, object_name: str) -> str:
        """The detector class for a PDDL object: explicit entry, else the name minus `_N`."""
        key = object_name.strip().lower()
        if key in self.explicit:
            return self.explicit[key]
        base = _INSTANCE_SUFFIX.sub("", key)
        if base in self.explicit:
            return self.explicit[base]
        return base.replace("_", " ")

    def target_for(self, object_name: str, model: ModelClasses) -> Target | None:
        """`object_name` with the model's own spelling of its class (None: unwatchable)."""
        class_name = model.spelling(self.class_for(object_name))
        return Target(object_name, class_name) if class_name is not None else None

    def target_in_step(self, arguments: Sequence[str], model: ModelClasses) -> Target | None:
        """The first plan-step argument whose class the model knows (None if none does).

        `fill_cup(cup_1, faucet_1)` -> `cup_1`: the robot acts on the object it can see.
        """
        for argument in arguments:
            target = self.target_for(argument, model)
            if target is not None:
                return target
        return None

    def unwatchable(self, object_names: Iterable[str], model: ModelClasses) -> dict[str, list[str]]:
        """Class -> the objects of it the model cannot see (it has no such class)."""
        found: dict[str, list[str]] = {}
        for name in sorted(set(object_names)):
            if self.target_for(name, model) is None:
                found.setdefault(self.class_for(name), []).append(name)
        return found


def describe_unwatchable(unwatchable: Mapping[str, Sequence[str]]) -> str:
    """`faucet (faucet_1), plate (plate_1, plate_2), bolt (10 objects)`: one line."""
    parts = [
        f"{class_name} ({', '.join(names) if len(names) <= 3 else f'{len(names)} objects'})"
        for class_name, names in sorted(unwatchable.items())
    ]
    return ", ".join(parts)


@dataclass(frozen=True)
class Target:
    """The object the current step is about: its plan name and its detector class."""

    object_name: str
    class_name: str


@dataclass(frozen=True)
class FrameSituation:
    """One situation seen in one frame, before debouncing."""

    kind: str  # MISSING | OCCUPIED
    object_name: str
    text: str
    confidence: float


def best_of_class(detections: Iterable[Detection], class_name: str) -> Detection | None:
    """The most confident detection of `class_name`, if any."""
    matches = [d for d in detections if d.class_name == class_name]
    return max(matches, key=lambda d: d.confidence, default=None)


def is_container(class_name: str) -> bool:
    """Whether objects of this class can have something in them (cup yes, person no)."""
    return class_key(class_name) in {class_key(name) for name in CONTAINER_CLASSES}


def merge_duplicates(
    detections: Iterable[Detection], keep_class: str = "", min_iou: float = DUPLICATE_IOU
) -> list[Detection]:
    """One box per object: of boxes overlapping by `min_iou` or more under different
    classes, only one stays, `keep_class`'s if one of them has it, else the most
    confident. (Same-class overlaps are the model's own NMS business and are kept.)"""
    ordered = sorted(detections, key=lambda d: (d.class_name != keep_class, -d.confidence))
    kept: list[Detection] = []
    for detection in ordered:
        if not any(
            other.class_name != detection.class_name and detection.iou(other) >= min_iou
            for other in kept
        ):
            kept.append(detection)
    return sorted(kept, key=lambda d: d.confidence, reverse=True)


def occupants(
    container: Detection, detections: Iterable[Detection], min_inside: float = 0.6
) -> list[Detection]:
    """Other, smaller objects whose boxes lie at least `min_inside` inside `container`'s."""
    return [
        d
        for d in detections
        if d.class_name != container.class_name
        and d.area < container.area
        and d.iou(container) < DUPLICATE_IOU
        and d.fraction_inside(container) >= min_inside
    ]


def _with_article(class_name: str) -> str:
    return f"{'an' if class_name[:1] in 'aeiou' else 'a'} {class_name}"


def missing_text(target: Target) -> str:
    """The sentence for a target that is not there."""
    return f"the {target.class_name} is missing"


def occupied_in_frame(
    detections: Sequence[Detection], target: Target, min_inside: float = 0.6
) -> FrameSituation | None:
    """The target container with something smaller in it, in one frame (None: it is
    not in view, not a container, or free)."""
    if not is_container(target.class_name):
        return None
    merged = merge_duplicates(detections, keep_class=target.class_name)
    found = best_of_class(merged, target.class_name)
    if found is None:
        return None
    inside = occupants(found, merged, min_inside)
    if not inside:
        return None
    names = sorted({d.class_name for d in inside})
    things = " and ".join(_with_article(name) for name in names)
    confidence = min(found.confidence, max(d.confidence for d in inside))
    return FrameSituation(
        OCCUPIED,
        target.object_name,
        f"the {target.class_name} is occupied: {things} in it",
        confidence,
    )


@dataclass
class _Track:
    seen: deque[FrameSituation | None]
    reported: bool = False


class SituationDebouncer:
    """Reports a situation once it held in `min_frames` of the last `window_frames` frames.

    The reported confidence is the share of window frames showing it times their mean
    per-frame confidence, so a flickering situation reports lower than a steady one. A
    reported situation is reported again only after it was absent for a whole window.
    """

    def __init__(self, window_frames: int = 5, min_frames: int = 3) -> None:
        if window_frames < 1 or not 1 <= min_frames <= window_frames:
            raise CowpError(
                "debounce needs 1 <= min_frames <= window_frames, "
                f"got {min_frames} of {window_frames}"
            )
        self.window_frames = window_frames
        self.min_frames = min_frames
        self._tracks: dict[tuple[str, str], _Track] = {}

    def reset(self) -> None:
        """Forget everything (the target changed: old evidence says nothing about it)."""
        self._tracks.clear()

    def update(self, frame: Iterable[FrameSituation]) -> list[FrameSituation]:
        """Feed one frame's situations; returns those that just became reportable."""
        current = {(s.kind, s.object_name): s for s in frame}
        for key in current.keys() - self._tracks.keys():
            self._tracks[key] = _Track(seen=deque(maxlen=self.window_frames))
        reports: list[FrameSituation] = []
        cleared: list[tuple[str, str]] = []
        for key, track in self._tracks.items():
            track.seen.append(current.get(key))
            hits = [s for s in track.seen if s is not None]
            if len(hits) >= self.min_frames:
                if not track.reported:
                    track.reported = True
                    share = len(hits) / self.window_frames
                    mean = sum(s.confidence for s in hits) / len(hits)
                    latest = hits[-1]
                    reports.append(
                        FrameSituation(latest.kind, latest.object_name, latest.text, share * mean)
                    )
            elif not hits:
                cleared.append(key)  # a new onset will be reported again
        for key in cleared:
            del self._tracks[key]
        return reports
