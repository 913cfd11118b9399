"""The real embedded server with SmolLM2-135M: start, round trips, stop, failure modes.

SmolLM2 answers near chance, so these tests assert the structure of answers (a verdict
in {True, False, None}, 0 <= P(yes) <= 1, usage counted, cache hits), never their
content. Timeouts are generous: CI runs on two busy cores.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import openai
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.endpoint import RunningServer, embedded_cache_scope, llm_endpoint
from cowp_ros.llm.local_server import LocalServer
from cowp_ros.llm.model_store import MODEL_NAME_ENV, ResolvedModel
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.llm.shared_server import KEEP_ALIVE_ENV

pytestmark = [pytest.mark.llm, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(small_model: ResolvedModel) -> Iterator[LocalServer]:
    with LocalServer(small_model, threads=2) as running:
        yield running


def test_round_trip_through_the_openai_client(server: LocalServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="local", timeout=120)
    assert [m.id for m in client.models.list().data] == ["smollm2-135m"]
    reply = client.chat.completions.create(
        model="smollm2-135m",
        messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=4,
        temperature=0,
    )
    assert reply.choices[0].message.content is not None
    assert reply.usage is not None and reply.usage.completion_tokens >= 1
    assert server.url is not None and server.url.startswith("http://127.0.0.1:")
    rss = server.rss_bytes()
    assert rss is None or rss > 50 * 2**20


def test_round_trip_through_the_language_model(server: LocalServer, tmp_path: Path) -> None:
    settings = LLMSettings(cache_path=tmp_path / "answers.sqlite3", timeout_s=120).with_endpoint(
        server.base_url, server.model.name
    )
    model = OpenAICompatibleModel(settings)
    question = "Is it suitable for a robot to fill a cup with water, if the cup is dirty?"
    verdict = model.ask_yes_no(question)
    assert verdict.answer in (True, False, None)
    assert verdict.p_yes is None or 0.0 <= verdict.p_yes <= 1.0
    assert not verdict.cached
    calls = model.usage.calls
    assert calls >= 1 and model.usage.prompt_tokens > 0 and model.usage.seconds > 0
    again = model.ask_yes_no(question)
    assert again.cached and (again.answer, again.p_yes) == (verdict.answer, verdict.p_yes)
    assert model.usage.calls == calls and model.usage.cache_hits == 1
    choice = model.ask_choice("Pick one: mug or fork?", ["mug", "fork"])
    assert choice.index in (0, 1, None)
    assert isinstance(model.complete("Name a fruit.", max_tokens=4), str)


def test_a_taken_port_is_reported(small_model: ResolvedModel) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(CowpError, match=rf"port {port} .* already in use"):
            LocalServer(small_model, port=port).start()


def test_a_request_timeout_is_a_cowp_error(server: LocalServer) -> None:
    settings = LLMSettings(cache_path=None, timeout_s=0.001).with_endpoint(
        server.base_url, server.model.name
    )
    model = OpenAICompatibleModel(settings, max_retries=0)
    with pytest.raises(CowpError, match="did not answer within"):
        model.complete("Write a long story about a robot.", max_tokens=200)


def test_after_stop_the_url_is_unreachable(small_model: ResolvedModel) -> None:
    with LocalServer(small_model, threads=1) as running:
        url, pid = running.base_url, running.pid
    assert pid is not None
    settings = LLMSettings(cache_path=None).with_endpoint(url, "smollm2-135m")
    with pytest.raises(CowpError, match="cannot reach the LLM server"):
        OpenAICompatibleModel(settings, max_retries=0).ask_yes_no("Is water wet?")
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists()  # stop() waited for (reaped) the child


def test_endpoint_uses_a_configured_server_unchanged() -> None:
    configured = LLMSettings(base_url="http://example.invalid/v1", model="m", cache_path=None)
    with llm_endpoint(configured) as settings:
        assert settings is configured


def test_endpoint_starts_and_stops_the_embedded_model(
    small_model: ResolvedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODEL_NAME_ENV, small_model.name)
    monkeypatch.setenv(KEEP_ALIVE_ENV, "0")  # a server of the caller's own
    seen: list[RunningServer] = []
    with llm_endpoint(LLMSettings(cache_path=None), on_start=seen.append) as settings:
        assert settings.configured and settings.model == "smollm2-135m"
        # answers are cached by the verified model file, not by the port of this start
        assert settings.cache_scope == embedded_cache_scope(small_model)
        assert f":{urlsplit(str(settings.base_url)).port}" not in settings.answer_scope
        model = OpenAICompatibleModel(settings)
        assert model.ask_yes_no("Is water wet?").answer in (True, False, None)
    assert seen and seen[0].url is None  # stopped on exit


def test_ctrl_c_while_the_server_answers_does_not_wait_for_the_answer(
    small_model: ResolvedModel,
) -> None:
    """An interrupted owner kills the server after a moment instead of letting it
    finish the answer it is generating (11 s on a busy machine for `cowp run`)."""
    import threading

    with pytest.raises(KeyboardInterrupt), LocalServer(small_model, threads=1) as running:
        settings = LLMSettings(cache_path=None, timeout_s=120).with_endpoint(
            running.base_url, running.model.name
        )
        model = OpenAICompatibleModel(settings, max_retries=0)

        def long_answer() -> None:
            with contextlib.suppress(Exception):
                model.complete("Write a very long story about a robot.", max_tokens=2000)

        threading.Thread(target=long_answer, daemon=True).start()
        time.sleep(1.5)  # the server is generating
        interrupted = time.monotonic()
        raise KeyboardInterrupt
    seconds = time.monotonic() - interrupted
    print(f"server stopped {seconds:.2f} s after the interrupt")
    assert seconds < 1.0
