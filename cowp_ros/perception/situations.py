"""From detections of the current target object to situations the planner can act on.

The plan names objects the PDDL way (`cup_1`); the detector names COCO classes (`cup`).
`ObjectClassMap` bridges the two from configuration, with a fallback that strips the
instance number (`wine_glass_2` -> `wine glass`).

Two situations are derived, per frame, for the object the current plan step uses:

- missing: no detection of the target's class in view;
- occupied: another object's box lies (mostly) inside the target's box, e.g. a fork in
  the cup. Same-class boxes are left out (a second, smaller box on the same cup is the
  detector repeating itself), and so are boxes larger than the target (a table the cup
  stands on contains the cup, not the other way round).

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
from cowp_ros.perception.detections import Detection

MISSING = "missing"
OCCUPIED = "occupied"
# PDDL names (without _N) in this repository's domains -> COCO classes, where they differ.
DEFAULT_OBJECT_CLASSES = (
    "mug=cup",
    "glass=cup",
    "table=dining table",
    "sofa=couch",
    "stool=chair",
    "coke=bottle",
    "burger=sandwich",
)
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

    def target_in_step(self, arguments: Sequence[str], known_classes: Iterable[str]) -> str | None:
        """The first plan-step argument whose class the detector knows (None if none does).

        `fill_cup(cup_1, faucet_1)` -> `cup_1`: the robot acts on the object it can see.
        """
        known = set(known_classes)
        for argument in arguments:
            if self.class_for(argument) in known:
                return argument
        return None


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


def occupants(
    container: Detection, detections: Iterable[Detection], min_inside: float = 0.6
) -> list[Detection]:
    """Other objects whose boxes lie at least `min_inside` inside `container`'s box."""
    return [
        d
        for d in detections
        if d.class_name != container.class_name
        and d.area < container.area
        and d.fraction_inside(container) >= min_inside
    ]


def _with_article(class_name: str) -> str:
    return f"{'an' if class_name[:1] in 'aeiou' else 'a'} {class_name}"


def situations_in_frame(
    detections: Sequence[Detection], target: Target, min_inside: float = 0.6
) -> list[FrameSituation]:
    """The situations one frame shows for `target` (empty when all looks normal)."""
    found = best_of_class(detections, target.class_name)
    if found is None:
        return [
            FrameSituation(MISSING, target.object_name, f"the {target.class_name} is missing", 1.0)
        ]
    inside = occupants(found, detections, min_inside)
    if not inside:
        return []
    names = sorted({d.class_name for d in inside})
    things = " and ".join(_with_article(name) for name in names)
    confidence = min(found.confidence, max(d.confidence for d in inside))
    return [
        FrameSituation(
            OCCUPIED,
            target.object_name,
            f"the {target.class_name} is occupied: {things} in it",
            confidence,
        )
    ]


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
