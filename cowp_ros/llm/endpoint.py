"""One place that decides which LLM server the stack talks to, starting one if needed.

If the user named a server (`--llm-url`, `OPENAI_BASE_URL`, a node parameter), that is
what they mean: use it unchanged. Otherwise start the embedded local model for as long
as the caller needs it and stop it afterwards, so nothing is left running and a robot
with no network still reasons.

    with llm_endpoint(LLMSettings.resolve()) as settings:
        ...  # hand settings.base_url to a process that talks to the model

`open_model` below is what a process that asks the model itself uses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.local_server import LocalServer
from cowp_ros.llm.model_store import MODEL_SHA256_ENV, ResolvedModel, resolve_model
from cowp_ros.llm.settings import LLMSettings


def embedded_cache_scope(model: ResolvedModel, env: dict[str, str] | None = None) -> str:
    """The answer cache's scope for the embedded server: the model file, not the port.

    A pinned model is its sha256 (verified before it is loaded); a user's own file is
    the sha256 they pinned, else its path, size and modification time, so replacing the
    file starts a fresh set of answers.
    """
    env = dict(os.environ) if env is None else env
    if model.spec is not None:
        return f"embedded:{model.name}:{model.spec.sha256}"
    pinned = env.get(MODEL_SHA256_ENV)
    if pinned:
        return f"embedded:{model.name}:{pinned}"
    try:
        stat = model.path.stat()
        identity = f"{model.path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        identity = str(model.path)
    return f"embedded:{model.name}:{identity}"


@contextmanager
def llm_endpoint(
    settings: LLMSettings,
    *,
    model_path: str | Path | None = None,
    model_name: str | None = None,
    on_start: Callable[[LocalServer], None] | None = None,
) -> Iterator[LLMSettings]:
    """Yield settings that point at a running server; start the embedded one if needed.

    `model_path` / `model_name` choose the embedded model (defaults:
    `COWP_LLM_MODEL_PATH`, `COWP_LLM_MODEL`, then Qwen2.5-Coder-1.5B). `on_start` sees
    the started server (the CLI prints its URL, start time and memory).
    """
    if settings.configured:
        yield settings
        return
    server = LocalServer(resolve_model(model_path, model_name))
    with server:
        if on_start is not None:
            on_start(server)
        yield settings.with_endpoint(
            server.base_url, server.model.name, cache_scope=embedded_cache_scope(server.model)
        )


@contextmanager
def open_model(
    settings: LLMSettings,
    *,
    model_path: str | Path | None = None,
    model_name: str | None = None,
    on_start: Callable[[LocalServer], None] | None = None,
) -> Iterator[OpenAICompatibleModel]:
    """The one way to open a language model: the configured server's, or the embedded
    one started for as long as the caller needs it (see `llm_endpoint`).

        with open_model(LLMSettings.resolve()) as model:
            model.ask_yes_no("Is it suitable for a robot to fill a cup with water?")
    """
    with llm_endpoint(
        settings, model_path=model_path, model_name=model_name, on_start=on_start
    ) as endpoint:
        model = OpenAICompatibleModel(endpoint)
        try:
            yield model
        finally:
            model.close()
