"""Wrist-camera perception: YOLO detection and the situations it implies.

ROS-free on purpose, so the CLI, the tests and the node share one implementation:

- `models`: where the detector model comes from (the COCO YOLOv3-tiny that setup
  converts from Darknet, or any ultralytics model a user names) and the checks on it.
- `detectors`: the ultralytics (default) and onnxruntime (torch-free) backends, both
  returning `Detection`s.
- `situations`: from detections of the current target object to situations a planner
  can use (missing, occupied), debounced over frames.
- `annotate`, `image_encoding`: drawing for rviz/the CLI, and ROS image bytes <-> arrays.

Heavy imports (torch, ultralytics, onnxruntime) happen inside the backends, so importing
this package stays cheap.
"""

# The detector backends, here so that `cowp` can offer them without importing OpenCV.
BACKENDS = ("ultralytics", "onnxruntime")
