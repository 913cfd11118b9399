"""One place that decides which LLM server the stack talks to, starting one if needed.

If the user named a server (`--llm-url`, `OPENAI_BASE_URL`, a node parameter), that is
what they mean: use it unchanged. Otherwise use the embedded local model, so a robot
with no network still reasons: the machine's one shared server of it
(`shared_server`: started by the first command that needs it, reused by the next ones,
stopped once unused for its keep-alive), or, with `COWP_LLM_KEEP_ALIVE=0`, a server of
the caller's own, stopped when it is done.

    with llm_endpoint(LLMSettings.resolve()) as settings:
        ...  # hand settings.base_url to a process that talks to the model

`open_model` below is what a process that asks the model itself uses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.local_server import LocalServer
from cowp_ros.llm.model_store import MODEL_SHA256_ENV, ResolvedModel, resolve_model
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.llm.shared_server import SharedServer, acquire, keep_alive_s

RunningServer = LocalServer | SharedServer
"""What `on_start` is shown: a server of the caller's own, or its use of the shared one
(`reused` says whether another command had started it)."""


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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


def with_served_model(settings: LLMSettings) -> LLMSettings:
    """`settings` naming a model: the one given, else the first the server lists on
    `/v1/models` (as an OpenAI client's `models.list()` reads it).

    Calibration, answer cache and report are keyed by the model's name, and a process
    that is handed the settings (a node's `llm_model`) must get that name, never none.
    """
    if settings.model:
        return settings
    client = OpenAICompatibleModel(settings.without_cache())
    try:
        return replace(settings, model=client.name)
    finally:
        client.close()


@contextmanager
def llm_endpoint(
    settings: LLMSettings,
    *,
    model_path: str | Path | None = None,
    model_name: str | None = None,
    on_start: Callable[[RunningServer], None] | None = None,
) -> Iterator[LLMSettings]:
    """Yield settings that point at a running server; the embedded one if none is named.

    `model_path` / `model_name` choose the embedded model (defaults:
    `COWP_LLM_MODEL_PATH`, `COWP_LLM_MODEL`, then Qwen2.5-Coder-1.5B). `on_start` sees
    the server once it answers (the CLI prints its URL, start time and memory). The
    settings come only then, so a question's deadline starts when the server is ready,
    never while it loads.
    """
    if settings.configured:
        yield with_served_model(settings)
        return
    model = resolve_model(model_path, model_name)
    scope = embedded_cache_scope(model)
    keep_alive = keep_alive_s()
    if keep_alive <= 0:
        with LocalServer(model) as server:
            if on_start is not None:
                on_start(server)
            yield settings.with_endpoint(server.base_url, model.name, cache_scope=scope)
        return
    shared = acquire(model, scope, keep_alive=keep_alive, say=_say)
    try:
        if on_start is not None:
            on_start(shared)
        yield settings.with_endpoint(shared.base_url, model.name, cache_scope=scope)
    finally:
        shared.release()


@contextmanager
def open_model(
    settings: LLMSettings,
    *,
    model_path: str | Path | None = None,
    model_name: str | None = None,
    on_start: Callable[[RunningServer], None] | None = None,
) -> Iterator[OpenAICompatibleModel]:
    """The one way to open a language model: the configured server's, or the embedded
    one (see `llm_endpoint`).

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


def describe_server(server: RunningServer) -> str:
    """The line a command prints about the embedded model it uses: started here (how
    long it took), or already loaded by an earlier command, and how long it stays."""
    rss = server.rss_bytes()
    memory = f", {rss / 2**30:.2f} GiB resident" if rss else ""
    if isinstance(server, SharedServer) and server.reused:
        return (
            f"using the embedded model {server.model.name} at {server.base_url}, already "
            f"loaded (pid {server.pid}{memory}; 'cowp llm status' shows it)"
        )
    took = f" in {server.start_seconds:.1f} s" if server.start_seconds is not None else ""
    line = f"started the embedded model {server.model.name} at {server.base_url}{took}{memory}"
    if isinstance(server, SharedServer):
        line += (
            f"; later commands use it too, and it stops once unused for "
            f"{server.record.keep_alive_s:g} s ('cowp llm stop' ends it now)"
        )
    return line
