"""Fixtures for the LLM tests: a scripted OpenAI-compatible server and the small model.

The scripted server answers chat completions from a queue the test fills, so the
client's parsing, caching and error paths are tested exactly and in milliseconds. The
real-server tests use SmolLM2-135M (provisioned by setup), whose answers we never
assert: only their structure.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.llm.model_store import SMOLLM2_135M, ResolvedModel


class ScriptedServer:
    """A loopback HTTP server; each request pops the next scripted reply."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, Any, float]] = []
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                server.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                status, body, delay = (
                    server.replies.pop(0) if server.replies else (500, {"error": "empty"}, 0)
                )
                time.sleep(delay)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def reply(self, body: Any, *, status: int = 200, delay: float = 0.0) -> None:
        self.replies.append((status, body, delay))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def completion(
    content: str,
    top: list[tuple[str, float]] | None = None,
    *,
    prompt_tokens: int = 20,
    cached_tokens: int = 0,
) -> dict[str, Any]:
    """A chat completion body as llama.cpp's server sends it."""
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "length",
        "message": {"role": "assistant", "content": content},
    }
    if top is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]
        choice["logprobs"] = {
            "content": [
                {
                    "token": top[0][0],
                    "logprob": top[0][1],
                    "bytes": None,
                    "top_logprobs": alternatives,
                }
            ]
        }
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 1,
            "total_tokens": prompt_tokens + 1,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
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
