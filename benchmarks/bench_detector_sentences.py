"""The detector's sentences on photos nobody on the team made: precision and recall.

Each case of `benchmarks/detector_sentences/cases.yaml` names sample images that ship
inside installed packages (scikit-image, ultralytics, matplotlib, Debian's darknet),
read where they are installed, a target object and the sentence a person would accept
for it ("the cup is missing") or none. The views go through the node's own rules
(`SituationTracker`: occupied debounced over frames, missing from distinct views), each
view fed as a still camera gives it, `--frames-per-view` identical frames. What the
rules report is compared with the label, sentence by sentence, per template:

    precision = right reports / reports of the template
    recall    = right reports / labelled sentences of the template

A case whose images are not on this machine (no Debian darknet) is skipped and counted.
`--rules before` runs the rules the node had before (every frame without the target's
box is evidence of "missing" at confidence 1.0, anything inside any target's box
occupies it, class names taken as configured), for comparison.

    .venv/bin/python benchmarks/bench_detector_sentences.py
    .venv/bin/python benchmarks/bench_detector_sentences.py --backend ultralytics --json out.json
    .venv/bin/python benchmarks/bench_detector_sentences.py --rules before
    .venv/bin/python benchmarks/bench_detector_sentences.py --smoke   # CI: five cases
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

CASES = Path(__file__).resolve().parent / "detector_sentences" / "cases.yaml"
TEMPLATES = ("missing", "occupied")
# The smoke run: the failures the old rules had on these photos, and one true report.
SMOKE_CASES = (
    "giraffe_and_zebra",
    "pickup_as_truck",
    "man_and_tie",
    "cat_photo",
    "no_cup_three_views",
)


def _package_dir(package: str, *parts: str) -> Path | None:
    """A data folder inside an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent.joinpath(*parts)


def image_path(source: str) -> Path | None:
    """`skimage:coffee.png` -> the installed file (None when it is not on this machine)."""
    package, _, name = source.partition(":")
    if package == "darknet":
        cache = Path(os.environ.get("COWP_CACHE_DIR") or Path.home() / ".cache" / "cowp_ros")
        folders = [Path("/usr/share/darknet/data"), cache / "test-images" / "darknet"]
    else:
        where = {
            "skimage": ("skimage", "data"),
            "ultralytics": ("ultralytics", "assets"),
            "matplotlib": ("matplotlib", "mpl-data", "sample_data"),
        }.get(package)
        if where is None:
            raise SystemExit(f"{CASES}: unknown image source {package!r} in {source!r}")
        folder = _package_dir(*where)
        folders = [folder] if folder is not None else []
    return next((f / name for f in folders if (f / name).is_file()), None)


def template_of(sentence: str) -> str:
    return next(
        (t for t in TEMPLATES if sentence.endswith(f" is {t}") or f" is {t}:" in sentence), ""
    )


@dataclass
class CaseResult:
    id: str
    target: str
    expected: str
    said: list[str] = field(default_factory=list)
    skipped: str = ""


class BeforeRules:
    """The rules as they were: per frame, no box = missing (1.0), and any smaller box of
    another class mostly inside the target's box occupies it; 3 of 5 frames."""

    def __init__(self) -> None:
        from cowp_ros.perception.situations import SituationDebouncer

        self.debouncer = SituationDebouncer(5, 3)

    def update(self, detections: list, target: object, _signature: object) -> tuple[list, list]:
        from cowp_ros.perception.situations import (
            MISSING,
            OCCUPIED,
            FrameSituation,
            best_of_class,
            missing_text,
        )

        name, cls = target.object_name, target.class_name  # type: ignore[attr-defined]
        found = best_of_class(detections, cls)
        frame = []
        if found is None:
            frame = [FrameSituation(MISSING, name, missing_text(target), 1.0)]  # type: ignore[arg-type]
        else:
            inside = sorted(
                {
                    d.class_name
                    for d in detections
                    if d.class_name != cls
                    and d.area < found.area
                    and d.fraction_inside(found) >= 0.6
                }
            )
            if inside:
                things = " and ".join(f"{'an' if c[0] in 'aeiou' else 'a'} {c}" for c in inside)
                text = f"the {cls} is occupied: {things} in it"
                frame = [FrameSituation(OCCUPIED, name, text, found.confidence)]
        return frame, self.debouncer.update(frame)


def run_case(case: dict, detector: object, frames_per_view: int, rules: str = "now") -> CaseResult:
    import cv2

    from cowp_ros.perception.class_names import ModelClasses
    from cowp_ros.perception.situation_tracker import SituationTracker, view_signature
    from cowp_ros.perception.situations import DEFAULT_OBJECT_CLASSES, ObjectClassMap

    expected = "" if case["expected"] == "none" else str(case["expected"])
    result = CaseResult(case["id"], case["target"], expected)
    model = ModelClasses(detector.class_names)  # type: ignore[attr-defined]
    class_map = ObjectClassMap.from_entries(DEFAULT_OBJECT_CLASSES)
    object_name = f"{case['target'].replace(' ', '_')}_1"
    target = class_map.target_for(object_name, model)
    if rules == "before" and class_map.class_for(object_name) not in model.names:
        target = None  # the class as configured, which the model may spell otherwise
    if target is None:
        result.skipped = f"the model has no class {case['target']!r}"
        return result
    paths = [image_path(source) for source in case["images"]]
    if any(path is None for path in paths):
        absent = [s for s, p in zip(case["images"], paths, strict=True) if p is None]
        result.skipped = f"not on this machine: {', '.join(absent)}"
        return result
    tracker = SituationTracker() if rules == "now" else BeforeRules()
    for path in paths:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise SystemExit(f"{path} is not an image OpenCV can read")
        detections = detector.detect(image)  # type: ignore[attr-defined]
        for _ in range(frames_per_view):
            _, reports = tracker.update(detections, target, view_signature(image))
            result.said += [r.text for r in reports]
    return result


def score(results: Sequence[CaseResult]) -> dict[str, dict[str, float | int | None]]:
    """Per template: reports, right ones, labelled sentences, precision, recall."""
    table: dict[str, dict[str, float | int | None]] = {}
    done = [r for r in results if not r.skipped]
    for template in TEMPLATES:
        said = [(r.id, s) for r in done for s in r.said if template_of(s) == template]
        wanted = [(r.id, r.expected) for r in done if template_of(r.expected) == template]
        right = len(set(said) & set(wanted))
        table[template] = {
            "reported": len(said),
            "right": right,
            "labelled": len(wanted),
            "precision": right / len(said) if said else None,
            "recall": right / len(wanted) if wanted else None,
        }
    return table


def _share(value: float | int | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--backend", choices=("onnxruntime", "ultralytics"), default="onnxruntime")
    parser.add_argument("--imgsz", type=int, default=416)
    parser.add_argument(
        "--frames-per-view", type=int, default=5, help="identical frames fed per view"
    )
    parser.add_argument(
        "--rules", choices=("now", "before"), default="now", help="the node's rules, or the old"
    )
    parser.add_argument("--json", type=Path, help="also save the results here")
    parser.add_argument("--smoke", action="store_true", help=f"only {', '.join(SMOKE_CASES)}")
    args = parser.parse_args()
    os.environ.setdefault("YOLO_OFFLINE", "true")
    from cowp_ros.errors import CowpError
    from cowp_ros.perception.detectors import create_detector

    cases = yaml.safe_load(args.cases.read_text())["cases"]
    if args.smoke:
        cases = [c for c in cases if c["id"] in SMOKE_CASES]
    try:
        detector = create_detector(args.backend, imgsz=args.imgsz)
    except CowpError as err:
        print(f"bench_detector_sentences: {err}", file=sys.stderr)
        return 1
    results = [run_case(case, detector, args.frames_per_view, args.rules) for case in cases]
    print(
        f"{detector.backend} on {detector.model_path.name} at {detector.imgsz} px, "
        f"{args.rules} rules, {args.frames_per_view} frames per view"
    )
    print("| case | target | expected | said |")
    print("|---|---|---|---|")
    for r in results:
        said = (r.skipped and f"skipped: {r.skipped}") or "; ".join(r.said) or "none"
        mark = "" if r.skipped or r.said == ([r.expected] if r.expected else []) else " (wrong)"
        print(f"| {r.id} | {r.target} | {r.expected or 'none'} | {said}{mark} |")
    table = score(results)
    print()
    print("| template | reported | right | labelled | precision | recall |")
    print("|---|---|---|---|---|---|")
    for template, row in table.items():
        print(
            f"| {template} | {row['reported']} | {row['right']} | {row['labelled']} | "
            f"{_share(row['precision'])} | {_share(row['recall'])} |"
        )
    skipped = sum(1 for r in results if r.skipped)
    false_alarms = [r.id for r in results if not r.skipped and r.said and not r.expected]
    print(
        f"cases: {len(results) - skipped} run, {skipped} skipped; "
        f"false reports where none is right: {', '.join(false_alarms) or 'none'}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "backend": detector.backend,
                    "imgsz": detector.imgsz,
                    "frames_per_view": args.frames_per_view,
                    "rules": args.rules,
                    "cases": [asdict(r) for r in results],
                    "templates": table,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
