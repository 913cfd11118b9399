"""The Darknet -> end-to-end ONNX converter, on a tiny network made up in the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the converter runs at setup time, with torch")
onnxruntime = pytest.importorskip("onnxruntime")

from cowp_ros.perception.darknet_onnx import (  # noqa: E402  (after the importorskip)
    DarknetNetwork,
    convert_darknet,
    parse_cfg,
)

# Two YOLO heads at strides 4 and 2 over three classes: the YOLOv3-tiny layer kinds
# (conv with and without batch norm, both maxpools, route, upsample, yolo), tiny.
TINY_CFG = """
[net]
width=32
height=32
channels=3
# a comment
[convolutional]
batch_normalize=1
filters=4
size=3
stride=1
pad=1
activation=leaky
[maxpool]
size=2
stride=2
[convolutional]
batch_normalize=1
filters=8
size=3
stride=1
pad=1
activation=leaky
[maxpool]
size=2
stride=2
[maxpool]
size=2
stride=1
[convolutional]
size=1
stride=1
pad=1
filters=16
activation=linear
[yolo]
mask=2,3
anchors=2,3, 4,5, 6,7, 8,9
classes=3
num=4
[route]
layers=-3
[upsample]
stride=2
[route]
layers=-1, 2
[convolutional]
size=1
stride=1
pad=1
filters=16
activation=linear
[yolo]
mask=0,1
anchors=2,3, 4,5, 6,7, 8,9
classes=3
num=4
"""


def weights_for(network: DarknetNetwork, rng: np.random.Generator, extra_floats: int = 0) -> bytes:
    header = np.array([0, 2, 0], dtype="<i4").tobytes() + np.array([0], dtype="<i8").tobytes()
    count = 0
    for layer, normalized in zip(network.layers, network.batch_normalized, strict=True):
        conv = getattr(layer, "__getitem__", None) and layer[0]
        if conv is None or not hasattr(conv, "out_channels"):
            continue
        count += conv.out_channels * (4 if normalized else 1) + conv.weight.numel()
    values = rng.normal(0, 0.3, count + extra_floats).astype("<f4")
    # Batch-norm variances must be positive: fold them via abs on the whole buffer.
    return header + np.abs(values).tobytes()


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    cfg = tmp_path / "tiny.cfg"
    cfg.write_text(TINY_CFG)
    network = DarknetNetwork(parse_cfg(TINY_CFG))
    weights = tmp_path / "tiny.weights"
    weights.write_bytes(weights_for(network, np.random.default_rng(0)))
    names = tmp_path / "tiny.names"
    names.write_text("apple\nbanana\ncherry\n")
    return convert_darknet(cfg, weights, names, tmp_path / "tiny.onnx")


def test_parse_cfg_reads_sections_in_order() -> None:
    sections = parse_cfg(TINY_CFG)
    assert [s.kind for s in sections[:3]] == ["net", "convolutional", "maxpool"]
    assert sections[0].integer("width") == 32
    assert sections[7].integers("anchors") == [2, 3, 4, 5, 6, 7, 8, 9]


def test_parse_cfg_rejects_a_file_without_net_section() -> None:
    with pytest.raises(ValueError, match=r"\[net\]"):
        parse_cfg("[convolutional]\nfilters=1\n")


def test_strides_follow_the_layers() -> None:
    network = DarknetNetwork(parse_cfg(TINY_CFG))
    heads = [i for i, s in enumerate(network.layer_sections) if s.kind == "yolo"]
    assert [network.output_strides[i] for i in heads] == [4, 2]


def test_weights_of_the_wrong_size_are_refused(tmp_path: Path) -> None:
    network = DarknetNetwork(parse_cfg(TINY_CFG))
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match="do not belong together"):
        network.load_darknet_weights(weights_for(network, rng, extra_floats=5))
    with pytest.raises(ValueError, match="shorter"):
        network.load_darknet_weights(weights_for(network, rng)[:-40])


def test_exported_model_is_end_to_end_and_takes_any_multiple_of_32(tiny_model: Path) -> None:
    session = onnxruntime.InferenceSession(str(tiny_model), providers=["CPUExecutionProvider"])
    metadata = session.get_modelmeta().custom_metadata_map
    assert metadata["end2end"] == "True"
    assert metadata["names"] == "{0: 'apple', 1: 'banana', 2: 'cherry'}"
    assert isinstance(session.get_outputs()[0].shape[0], str)  # ultralytics: dynamic sizes
    rng = np.random.default_rng(2)
    for height, width in ((32, 32), (64, 96)):
        image = rng.random((1, 3, height, width), dtype=np.float32)
        (rows,) = session.run(None, {"images": image})
        assert rows.ndim == 3 and rows.shape[0] == 1 and rows.shape[2] == 6
        scores = rows[0, :, 4]
        assert np.all(scores[:-1] >= scores[1:])  # best first
        assert np.all((rows[0, :, 5] >= 0) & (rows[0, :, 5] < 3))
        assert np.all(rows[0, :, 2] >= rows[0, :, 0]) and np.all(rows[0, :, 3] >= rows[0, :, 1])


def test_exported_model_matches_pytorch(tiny_model: Path) -> None:
    """The ONNX graph decodes boxes exactly as the PyTorch network does."""
    import torch

    network = DarknetNetwork(parse_cfg(TINY_CFG))
    network.load_darknet_weights((tiny_model.parent / "tiny.weights").read_bytes())
    network.eval()
    image = np.random.default_rng(3).random((1, 3, 64, 64), dtype=np.float32)
    with torch.no_grad():
        boxes, scores = network(torch.from_numpy(image))
    session = onnxruntime.InferenceSession(str(tiny_model), providers=["CPUExecutionProvider"])
    (rows,) = session.run(None, {"images": image})
    best = rows[0, 0]
    class_index = int(best[5])
    candidate = int(torch.argmax(scores[0, class_index]))
    assert best[4] == pytest.approx(float(scores[0, class_index, candidate]), rel=1e-4)
    assert np.allclose(best[:4], boxes[0, candidate].numpy(), atol=1e-3)
