"""Fixtures for the LLM tests: the scripted OpenAI-compatible server and the small model.

The scripted server (`cowp_ros.chaos.server`, the one the fault-injection harness uses)
answers chat completions from a queue the test fills, so the client's parsing, caching
and error paths are tested exactly and in milliseconds. The real-server tests use
SmolLM2-135M (provisioned by setup), whose answers we never assert: only their structure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.chaos.server import ScriptedLLMServer, completion
from cowp_ros.llm.model_store import SMOLLM2_135M, ResolvedModel

ScriptedServer = ScriptedLLMServer
"""The name these tests have always used for it."""


@pytest.fixture
def scripted() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def small_model() -> ResolvedModel:
    """SmolLM2-135M as provisioned by setup; skips (with the fix) when it is absent."""
    pytest.importorskip("xllamacpp", reason="run scripts/setup.d/llm_model.sh (make setup)")
    path: Path = SMOLLM2_135M.path
    if not path.is_file():
        pytest.skip(f"{path} missing: run 'cowp llm provision smollm2-135m' (make setup)")
    return ResolvedModel(path=path, name=SMOLLM2_135M.name, spec=SMOLLM2_135M)


@pytest.fixture
def make_completion() -> Any:
    """The `completion` body builder, for tests that script replies."""
    return completion
