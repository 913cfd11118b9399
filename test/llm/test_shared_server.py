"""One embedded model server per machine: started once, reused, shared, stopped when unused.

With the real server and SmolLM2-135M (about a second to load), in a runtime folder of
each test's own. Waits are on conditions (a process gone, a file removed), never on a
guessed moment.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cowp_ros.cli import main
from cowp_ros.errors import CowpError
from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.endpoint import RunningServer, describe_server, llm_endpoint
from cowp_ros.llm.model_store import MODEL_NAME_ENV, ResolvedModel
from cowp_ros.llm.server_files import ServerFiles
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.llm.shared_server import (
    KEEP_ALIVE_ENV,
    RUNTIME_DIR_ENV,
    SharedServer,
    acquire,
    keep_alive_s,
    servers,
    stop_servers,
)

pytestmark = [pytest.mark.llm, pytest.mark.slow]

WAIT_S = 120.0
"""Upper bound of a condition wait; a passing run returns as soon as it holds."""


def _gone(pid: int) -> bool:
    try:
        return not Path(f"/proc/{pid}/cmdline").read_bytes()  # empty for a zombie
    except OSError:
        return True


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {WAIT_S:g} s")
        time.sleep(0.1)


@pytest.fixture
def runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_model: ResolvedModel
) -> Iterator[Path]:
    folder = tmp_path / "run"
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(folder))
    monkeypatch.setenv(MODEL_NAME_ENV, small_model.name)
    monkeypatch.delenv(KEEP_ALIVE_ENV, raising=False)
    yield folder
    stop_servers(folder, grace_s=5.0)


def test_a_second_command_reuses_the_server_the_first_started(
    runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[RunningServer] = []
    settings = LLMSettings(cache_path=None, timeout_s=120)
    with llm_endpoint(settings, on_start=seen.append) as first:
        model = OpenAICompatibleModel(first)
        assert model.ask_yes_no("Is water wet?").answer in (True, False, None)
    assert isinstance(seen[0], SharedServer) and not seen[0].reused
    assert "later commands use it too" in describe_server(seen[0])
    (running,) = servers(runtime)  # still there once the first command is done
    with llm_endpoint(settings, on_start=seen.append) as second:
        assert second.base_url == first.base_url
        assert second.cache_scope == first.cache_scope  # the same answers, the same file
    assert isinstance(seen[1], SharedServer) and seen[1].reused
    assert seen[1].pid == running.pid
    assert "already loaded" in describe_server(seen[1])

    assert main(["llm", "status"]) == 0
    status = capsys.readouterr().out
    assert f"pid {running.pid}" in status and "idle" in status
    assert main(["llm", "stop"]) == 0
    assert f"stopped smollm2-135m at {running.base_url}" in capsys.readouterr().out
    assert _gone(running.pid)
    assert servers(runtime) == []
    assert main(["llm", "status"]) == 0
    assert "no embedded model server is running" in capsys.readouterr().out


def test_commands_that_start_at_once_share_one_server(
    runtime: Path, small_model: ResolvedModel
) -> None:
    held: list[SharedServer] = []
    errors: list[BaseException] = []

    def command() -> None:
        try:
            held.append(acquire(small_model, "scope", keep_alive=60, directory=runtime))
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=command) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len({server.pid for server in held}) == 1
    assert sorted(server.reused for server in held) == [False, True, True]
    for server in held:
        server.release()


def test_an_unused_server_stops_after_its_keep_alive_and_not_while_used(
    runtime: Path, small_model: ResolvedModel
) -> None:
    first = acquire(small_model, "scope", keep_alive=0.5, directory=runtime)
    files = ServerFiles.for_identity("scope", runtime)
    time.sleep(2.0)  # four keep-alives with a user: it must still be there
    assert not _gone(first.pid) and files.state.is_file()
    first.release()
    _wait_until(lambda: _gone(first.pid), "the unused server's exit")
    assert not files.state.exists()
    # the next command starts a new one
    again = acquire(small_model, "scope", keep_alive=60, directory=runtime)
    assert not again.reused and again.pid != first.pid
    again.release()


def test_a_stale_record_is_replaced(runtime: Path, small_model: ResolvedModel) -> None:
    runtime.mkdir(parents=True)
    files = ServerFiles.for_identity("scope", runtime)
    stale = {
        "pid": os.getpid(),  # alive, but not a model server
        "url": "http://127.0.0.1:9",
        "model": small_model.name,
        "identity": "scope",
        "model_path": str(small_model.path),
        "keep_alive_s": 60,
        "started_at": 0,
    }
    files.state.write_text(json.dumps(stale))
    server = acquire(small_model, "scope", keep_alive=60, directory=runtime)
    assert not server.reused and server.pid != os.getpid()
    assert json.loads(files.state.read_text())["pid"] == server.pid
    server.release()


def test_zero_keep_alive_gives_the_command_its_own_server(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEEP_ALIVE_ENV, "0")
    seen: list[RunningServer] = []
    with llm_endpoint(LLMSettings(cache_path=None), on_start=seen.append):
        assert not isinstance(seen[0], SharedServer)
    assert seen[0].url is None  # stopped with the command
    assert servers(runtime) == []


def test_a_bad_keep_alive_names_the_variable_and_the_fix() -> None:
    with pytest.raises(CowpError, match=f"{KEEP_ALIVE_ENV}='soon' is not a number") as caught:
        keep_alive_s({KEEP_ALIVE_ENV: "soon"})
    assert "0 for a server per command" in str(caught.value)
    assert keep_alive_s({KEEP_ALIVE_ENV: "30"}) == 30.0
    assert keep_alive_s({}) == 300.0


OWNER = """
import sys, time
from pathlib import Path
from cowp_ros.llm.model_store import resolve_model
from cowp_ros.llm.shared_server import acquire
server = acquire(resolve_model(None, "smollm2-135m"), "scope", keep_alive=0.5,
                 directory=Path(sys.argv[1]))
print(server.pid, flush=True)
time.sleep(600)
"""


def test_a_killed_command_does_not_keep_the_server_alive(runtime: Path) -> None:
    import signal
    import subprocess
    import sys

    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(runtime)], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    server_pid = int(owner.stdout.readline())
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(timeout=30)
    _wait_until(lambda: _gone(server_pid), "the server's exit after its only user was killed")
