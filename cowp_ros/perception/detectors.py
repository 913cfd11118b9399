"""Detector backends: ultralytics (default) and onnxruntime (torch-free), one output type.

Both take BGR uint8 frames and return `Detection`s in the frame's pixels, best first.

- `UltralyticsDetector` runs anything ultralytics loads: the default end-to-end ONNX
  model, a user's `.pt` or export. It is fed numpy frames only: with an end-to-end ONNX
  model that path never imports torchvision (PyPI's build of it is CUDA-only and fails
  to import on the CPU torch this stack installs). A `.pt` model or a plain ONNX export
  does import it, and then needs a torchvision that matches torch; the error says so.
- `OnnxRuntimeDetector` runs the same end-to-end ONNX file with onnxruntime and numpy
  only (no torch in the process), with ultralytics' letterbox, so both backends see
  the same pixels and report the same boxes.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from cowp_ros.errors import CowpError
from cowp_ros.perception import BACKENDS
from cowp_ros.perception.detections import Detection
from cowp_ros.perception.models import resolve_model

STRIDE = 32  # YOLO input sides are multiples of the network's largest stride
LETTERBOX_GRAY = 114  # ultralytics' padding value


class Detector(Protocol):
    """What the node and the CLI need from a backend."""

    backend: str
    model_path: Path
    imgsz: int
    class_names: tuple[str, ...]  # everything the model can report

    def detect(self, image_bgr: np.ndarray) -> list[Detection]:
        """Objects in one BGR uint8 frame, highest confidence first."""
        ...


def check_imgsz(imgsz: int) -> int:
    """The inference size, validated: a positive multiple of 32."""
    if imgsz <= 0 or imgsz % STRIDE:
        raise CowpError(f"imgsz must be a positive multiple of {STRIDE}, got {imgsz}")
    return imgsz


def check_confidence(confidence: float) -> float:
    """A confidence threshold, validated to lie in 0..1."""
    if not 0.0 <= confidence <= 1.0:
        raise CowpError(f"confidence threshold must be between 0 and 1, got {confidence}")
    return confidence


class UltralyticsDetector:
    """Any model ultralytics can load, run on numpy frames on the CPU."""

    backend = "ultralytics"

    def __init__(self, model_path: Path, imgsz: int = 416, confidence: float = 0.25) -> None:
        # Never let ultralytics reach for the network (hub downloads, update checks), and
        # keep its per-model banner out of the CLI's output.
        os.environ.setdefault("YOLO_OFFLINE", "true")
        os.environ.setdefault("YOLO_VERBOSE", "false")
        from ultralytics import YOLO

        self.model_path = model_path
        self.imgsz = check_imgsz(imgsz)
        self.confidence = check_confidence(confidence)
        try:
            self._model = YOLO(str(model_path), task="detect")
        except Exception as err:  # ultralytics raises many types; the user needs the cause
            raise CowpError(f"ultralytics cannot load {model_path}: {err}") from err
        self.class_names = tuple(self._model.names.values())

    def detect(self, image_bgr: np.ndarray) -> list[Detection]:
        try:
            result = self._model.predict(
                image_bgr, imgsz=self.imgsz, conf=self.confidence, verbose=False
            )[0]
        except ModuleNotFoundError as err:
            raise CowpError(
                f"ultralytics needs {err.name} for {self.model_path.name}",
                hint="use an end-to-end ONNX model (export with nms=True) or install a "
                "torchvision build that matches torch",
            ) from err
        except RuntimeError as err:
            if "torchvision" not in str(err):
                raise
            raise CowpError(
                f"ultralytics imported torchvision for {self.model_path.name}, which is "
                "broken here (PyPI's torchvision is a CUDA build)",
                hint="use an end-to-end ONNX model (export with nms=True), e.g. the default",
            ) from err
        names = result.names
        boxes = result.boxes
        detections = [
            Detection(names[int(cls)], float(conf), *(float(v) for v in box))
            for cls, conf, box in zip(
                boxes.cls.tolist(), boxes.conf.tolist(), boxes.xyxy.tolist(), strict=True
            )
        ]
        return sorted(detections, key=lambda d: d.confidence, reverse=True)


class OnnxRuntimeDetector:
    """An end-to-end ONNX detector (output 1 x K x 6, NMS inside) on onnxruntime alone."""

    backend = "onnxruntime"

    def __init__(
        self, model_path: Path, imgsz: int = 416, confidence: float = 0.25, threads: int = 0
    ) -> None:
        import onnxruntime

        self.model_path = model_path
        self.imgsz = check_imgsz(imgsz)
        self.confidence = check_confidence(confidence)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0: onnxruntime picks (one per core)
        try:
            self._session = onnxruntime.InferenceSession(
                str(model_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as err:  # onnxruntime raises its own Fail/InvalidGraph types
            raise CowpError(f"onnxruntime cannot load {model_path}: {err}") from err
        metadata = self._session.get_modelmeta().custom_metadata_map
        output = self._session.get_outputs()[0]
        end2end = ast.literal_eval(metadata.get("end2end", "False")) is True
        if not end2end or output.shape[-1] != 6:
            raise CowpError(
                f"{model_path.name} is not an end-to-end detector (NMS inside, output N x 6)",
                hint="use --backend ultralytics for it, or export it with nms=True",
            )
        self._names: dict[int, str] = ast.literal_eval(metadata.get("names", "{}"))
        self.class_names = tuple(self._names.values())
        self._input_name = self._session.get_inputs()[0].name
        input_shape = self._session.get_inputs()[0].shape
        # A graph with symbolic sides takes the minimal padded rectangle, as ultralytics does.
        self._dynamic_sides = not all(isinstance(side, int) for side in input_shape[2:])
        if not self._dynamic_sides:
            self.imgsz = int(input_shape[2])

    def _letterbox(self, image_bgr: np.ndarray) -> tuple[np.ndarray, float, float, int, int]:
        """Resized, padded RGB CHW float input, and (x gain, y gain, left, top) to undo it."""
        height, width = image_bgr.shape[:2]
        scale = min(self.imgsz / height, self.imgsz / width)
        new_width, new_height = max(round(width * scale), 1), max(round(height * scale), 1)
        pad_width, pad_height = self.imgsz - new_width, self.imgsz - new_height
        if self._dynamic_sides:
            pad_width, pad_height = pad_width % STRIDE, pad_height % STRIDE
        left, top = round(pad_width / 2 - 0.1), round(pad_height / 2 - 0.1)
        right, bottom = pad_width - left, pad_height - top
        if (new_width, new_height) != (width, height):
            image_bgr = cv2.resize(
                image_bgr, (new_width, new_height), interpolation=cv2.INTER_LINEAR
            )
        padded = cv2.copyMakeBorder(
            image_bgr, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(LETTERBOX_GRAY,) * 3
        )
        tensor = padded[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        gain_x, gain_y = new_width / width, new_height / height
        return np.ascontiguousarray(tensor), gain_x, gain_y, left, top

    def detect(self, image_bgr: np.ndarray) -> list[Detection]:
        height, width = image_bgr.shape[:2]
        tensor, gain_x, gain_y, left, top = self._letterbox(image_bgr)
        (rows,) = self._session.run(None, {self._input_name: tensor})
        detections = []
        for x1, y1, x2, y2, score, cls in rows[0]:
            if score < self.confidence:
                continue
            detections.append(
                Detection(
                    self._names.get(int(cls), f"class{int(cls)}"),
                    float(score),
                    float(np.clip((x1 - left) / gain_x, 0, width)),
                    float(np.clip((y1 - top) / gain_y, 0, height)),
                    float(np.clip((x2 - left) / gain_x, 0, width)),
                    float(np.clip((y2 - top) / gain_y, 0, height)),
                )
            )
        return sorted(detections, key=lambda d: d.confidence, reverse=True)


def create_detector(
    backend: str = "ultralytics",
    model: str | os.PathLike[str] = "",
    imgsz: int = 416,
    confidence: float = 0.25,
    threads: int = 0,
) -> Detector:
    """The named backend on `model` (empty: the provisioned default)."""
    if backend not in BACKENDS:
        raise CowpError(
            f"unknown detector backend {backend!r}", hint=f"use one of {', '.join(BACKENDS)}"
        )
    check_imgsz(imgsz)
    check_confidence(confidence)
    model_path = resolve_model(model)
    if backend == "onnxruntime":
        return OnnxRuntimeDetector(model_path, imgsz, confidence, threads)
    return UltralyticsDetector(model_path, imgsz, confidence)
