"""`cowp detect IMAGE...`: run the wrist-camera detector on image files.

Prints each image's detections and, with `--target`, the situations the node would
derive for that object from these images taken as successive views (occupied per
image; missing from the evidence of the distinct views without it, as the node judges
it), and writes annotated copies with `--out`. The same detector and rules as the
situation_detector node, so this is how a person checks what the robot will see.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from cowp_ros.errors import CowpError
from cowp_ros.perception import BACKENDS


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `detect` subcommand."""
    parser = subparsers.add_parser(
        "detect",
        help="detect objects (and situations) in images with the wrist-camera detector",
        description="Detect objects in images with the wrist-camera detector (COCO "
        "YOLOv3-tiny by default: a weak 2018 model; it finds people, cups, dogs, buses, "
        "but misses many household objects).",
    )
    parser.add_argument("images", nargs="+", type=Path, metavar="IMAGE", help="image files")
    parser.add_argument("--backend", choices=BACKENDS, default="ultralytics")
    parser.add_argument(
        "--model", default="", help="model file (default: the model make setup provisions)"
    )
    parser.add_argument("--imgsz", type=int, default=416, help="inference size, multiple of 32")
    parser.add_argument("--conf", type=float, default=0.25, help="confidence threshold (0..1)")
    parser.add_argument(
        "--target",
        default="",
        metavar="CLASS",
        help="object class (or PDDL name like cup_1) to check for missing/occupied",
    )
    parser.add_argument(
        "--occupied-min-inside",
        type=float,
        default=0.6,
        help="share of a box inside the target's box that counts as in it",
    )
    parser.add_argument(
        "--object-class",
        action="append",
        default=[],
        metavar="NAME=CLASS",
        help="map a PDDL object name to a detector class, e.g. mug=cup (repeatable; "
        "adds to the node's defaults)",
    )
    parser.add_argument("--out", type=Path, help="write annotated images into this folder")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Detect in every image; exit 0 when all were read."""
    import cv2  # after argument parsing: `cowp --help` stays fast

    from cowp_ros.perception.annotate import annotate
    from cowp_ros.perception.class_names import ModelClasses
    from cowp_ros.perception.detectors import create_detector
    from cowp_ros.perception.situation_tracker import (
        SituationTracker,
        TrackerSettings,
        view_signature,
    )
    from cowp_ros.perception.situations import DEFAULT_OBJECT_CLASSES, MISSING, ObjectClassMap

    for image_path in args.images:
        if not image_path.is_file():
            raise CowpError(f"image not found: {image_path}")
    detector = create_detector(args.backend, args.model, args.imgsz, args.conf)
    target = None
    tracker = SituationTracker(
        TrackerSettings(window_frames=1, min_frames=1, occupied_min_inside=args.occupied_min_inside)
    )
    if args.target:
        class_map = ObjectClassMap.from_entries([*DEFAULT_OBJECT_CLASSES, *args.object_class])
        target = class_map.target_for(args.target, ModelClasses(detector.class_names))
        if target is None:
            raise CowpError(
                f"the model has no class {class_map.class_for(args.target)!r}",
                hint=f"classes: {', '.join(detector.class_names)}",
            )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    print(f"{detector.backend} on {detector.model_path} at {detector.imgsz} px")
    for image_path in args.images:
        image = cv2.imread(str(image_path), cv2.IMREAD_COLOR)
        if image is None:
            raise CowpError(
                f"cannot read {image_path} as an image (corrupt, or not an image format)"
            )
        started = time.perf_counter()
        detections = detector.detect(image)
        elapsed_ms = (time.perf_counter() - started) * 1000
        print(f"{image_path}: {len(detections)} detections ({elapsed_ms:.0f} ms)")
        for detection in detections:
            print(f"  {detection.describe()}")
        situations, _ = (
            tracker.update(detections, target, view_signature(image)) if target else ([], [])
        )
        for situation in situations:
            if situation.kind != MISSING or situation.confidence >= tracker.missing.min_confidence:
                print(f"  situation: {situation.text} (confidence {situation.confidence:.2f})")
            else:
                print(
                    f"  not in view: {situation.text} only at confidence "
                    f"{situation.confidence:.2f} ({tracker.missing.views} distinct view(s) "
                    f"without it; reported at {tracker.missing.min_confidence:.2f})"
                )
        if target and not situations:
            print(f"  situation: none, the {target.class_name} is in view and free")
        if args.out:
            drawn = annotate(
                image, detections, target.class_name if target else "", [s.text for s in situations]
            )
            out_path = args.out / f"{image_path.stem}.detections.jpg"
            if not cv2.imwrite(str(out_path), drawn):
                raise CowpError(f"cannot write {out_path}")
            print(f"  annotated: {out_path}")
    return 0
