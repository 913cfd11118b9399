"""Choosing and verifying model files: pins, GGUF headers, user paths, corrupt copies."""

from __future__ import annotations

import hashlib
import shutil
import struct
from pathlib import Path

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.llm.model_store import (
    DEFAULT_MODEL,
    MODEL_PATH_ENV,
    MODEL_SHA256_ENV,
    SMOLLM2_135M,
    ResolvedModel,
    resolve_model,
    verify_model,
    verify_resolved,
)


def _tiny_gguf(path: Path, architecture: str = "llama") -> str:
    key, value = b"general.architecture", architecture.encode()
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    body += struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, len(value)) + value
    path.write_bytes(body)
    return hashlib.sha256(body).hexdigest()


def test_resolution_order_is_flag_then_env_then_name() -> None:
    env = {MODEL_PATH_ENV: "/models/env.gguf"}
    assert resolve_model("/models/flag.gguf", env=env).path == Path("/models/flag.gguf")
    assert resolve_model(env=env).path == Path("/models/env.gguf")
    assert resolve_model(env={}).name == DEFAULT_MODEL
    assert resolve_model(model_name="smollm2-135m", env={}).spec is SMOLLM2_135M
    with pytest.raises(CowpError, match="unknown local model"):
        resolve_model(model_name="gpt-17", env={})


def test_missing_file_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(CowpError, match="does not exist") as caught:
        verify_model(tmp_path / "absent.gguf", sha256=None)
    assert "cowp llm provision" in str(caught.value)


def test_sha_mismatch_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    good = _tiny_gguf(model)
    verify_model(model, sha256=good, architecture="llama")
    model.write_bytes(model.read_bytes() + b"tampered")
    with pytest.raises(CowpError, match=r"refusing model file .* does not match the pinned"):
        verify_model(model, sha256=good)


def test_wrong_architecture_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    _tiny_gguf(model, architecture="bert")
    with pytest.raises(CowpError, match="'bert' model, expected 'qwen2'"):
        verify_model(model, sha256=None, architecture="qwen2")


def test_a_users_own_file_is_checked_against_their_pin(tmp_path: Path) -> None:
    model = tmp_path / "mine.gguf"
    digest = _tiny_gguf(model)
    user = ResolvedModel(model, "mine", None)
    assert verify_resolved(user, env={}).architecture == "llama"  # header only
    assert verify_resolved(user, env={MODEL_SHA256_ENV: digest}).architecture == "llama"
    with pytest.raises(CowpError, match="does not match"):
        verify_resolved(user, env={MODEL_SHA256_ENV: "0" * 64})


def test_stamp_skips_the_rehash_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    digest = _tiny_gguf(model)
    verify_model(model, sha256=digest)
    assert (tmp_path / "m.gguf.verified.json").is_file()
    data = bytearray(model.read_bytes())
    data[-1] ^= 0xFF  # same size, different bytes and mtime
    model.write_bytes(bytes(data))
    with pytest.raises(CowpError, match="does not match"):
        verify_model(model, sha256=digest)


@pytest.mark.llm
@pytest.mark.slow
def test_a_corrupt_copy_of_the_real_model_is_refused(tmp_path: Path) -> None:
    if not SMOLLM2_135M.path.is_file():
        pytest.skip("SmolLM2 not provisioned (make setup)")
    copy = tmp_path / SMOLLM2_135M.filename
    shutil.copyfile(SMOLLM2_135M.path, copy)
    with copy.open("r+b") as stream:  # flip one byte in the middle of the tensors
        stream.seek(SMOLLM2_135M.size // 2)
        byte = stream.read(1)
        stream.seek(SMOLLM2_135M.size // 2)
        stream.write(bytes([byte[0] ^ 0xFF]))
    spec = SMOLLM2_135M
    with pytest.raises(CowpError, match="refusing model file") as caught:
        verify_model(
            copy, sha256=spec.sha256, architecture=spec.architecture, general_name=spec.general_name
        )
    assert spec.sha256 in str(caught.value) and "cowp llm provision" in str(caught.value)
