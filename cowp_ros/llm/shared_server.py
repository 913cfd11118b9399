"""One embedded model server per machine, shared by every command that needs it.

Loading the 1.1 GB model takes about a minute on a busy 2-core machine, and a server
that has just read the questions' shared prefix answers the next one in seconds: a
server per command pays the load and the prefix every time. So, as Ollama's one server
serves every client, the first command that needs the embedded model starts it in a
process of its own; every later command (a `cowp run`, the commonsense node of
`cowp demo` or `cowp bringup`, `cowp llm ask`) finds it and uses it; it stops by itself
once no command has used it for its keep-alive (`COWP_LLM_KEEP_ALIVE`, seconds, default
300; 0 gives every command a server of its own again, stopped when it ends).

What one machine shares lives in a runtime folder (`COWP_LLM_RUNTIME_DIR`, else
`$XDG_RUNTIME_DIR/cowp_ros`, else `~/.cache/cowp_ros/run`), a set of files per model
file (its verified identity, the answer cache's scope):

* `<key>.json`: the running server (pid, URL, model, identity), written once it answers;
* `<key>.lock`: held by whoever looks a server up, starts one or stops one, so two
  commands that start at once start one server, and a server never stops while a
  command is finding it;
* `<key>.users`: every command that uses the server holds a shared lock on it for as
  long as it does; the server counts itself idle while it can take the lock alone. The
  kernel drops a lock with its process, so a command that is killed never keeps the
  server alive.

A server is reused only when its process is alive, is the embedded server, and answers
`/health` with the same model: a stale file (a rebooted machine, a killed server) is
replaced. `cowp llm status` lists the servers, `cowp llm stop` ends them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO

from cowp_ros.errors import CowpError
from cowp_ros.llm.local_server import (
    DEFAULT_CONTEXT,
    DEFAULT_START_TIMEOUT_S,
    READY_MARK,
    process_rss_bytes,
    require_xllamacpp,
)
from cowp_ros.llm.model_store import ResolvedModel, verify_resolved
from cowp_ros.llm.server_files import (
    ServerFiles,
    ServerRecord,
    locked,
    read_record,
    unused,
    write_record,
)
from cowp_ros.llm.settings import DEFAULT_CACHE_DIR

KEEP_ALIVE_ENV = "COWP_LLM_KEEP_ALIVE"
RUNTIME_DIR_ENV = "COWP_LLM_RUNTIME_DIR"
DEFAULT_KEEP_ALIVE_S = 300.0
"""Ollama keeps a model loaded 5 minutes after its last request; so does this server."""
SERVER_MODULE = "cowp_ros.llm.local_server"


def runtime_dir(env: dict[str, str] | None = None) -> Path:
    """The folder of the machine's shared servers (see the module docstring)."""
    env = dict(os.environ) if env is None else env
    if env.get(RUNTIME_DIR_ENV):
        return Path(env[RUNTIME_DIR_ENV]).expanduser()
    if env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"]) / "cowp_ros"
    return DEFAULT_CACHE_DIR / "run"


def keep_alive_s(env: dict[str, str] | None = None) -> float:
    """Seconds a shared server stays without users; 0 means one server per command."""
    env = dict(os.environ) if env is None else env
    raw = env.get(KEEP_ALIVE_ENV, "").strip()
    if not raw:
        return DEFAULT_KEEP_ALIVE_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise CowpError(
            f"{KEEP_ALIVE_ENV}={raw!r} is not a number of seconds.",
            hint=f"set it to the seconds the embedded model stays loaded after its last "
            f"command (default {DEFAULT_KEEP_ALIVE_S:g}), or 0 for a server per command",
        )
    return value


def _is_our_server(pid: int) -> bool:
    """Whether `pid` is alive and is the embedded server (a reused pid is not)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return SERVER_MODULE.encode() in command


def _answers(record: ServerRecord, timeout_s: float = 10.0) -> bool:
    """Whether the server answers `/health` and serves the recorded model."""
    try:
        with urllib.request.urlopen(f"{record.url}/health", timeout=timeout_s) as reply:
            if reply.status != 200:
                return False
        with urllib.request.urlopen(f"{record.base_url}/models", timeout=timeout_s) as reply:
            listed = json.loads(reply.read(1 << 16))
    except (urllib.error.URLError, OSError, ValueError):
        return False
    names = [str(entry.get("id")) for entry in listed.get("data", []) if isinstance(entry, dict)]
    return record.model in names


def live_record(files: ServerFiles) -> ServerRecord | None:
    """The recorded server if it is alive and answers; a stale record is removed.

    The caller holds `files.lock`.
    """
    record = read_record(files)
    if record is None:
        return None
    # A server busy with a long prompt on a loaded machine can be slow to answer even
    # /health: a live server process gets a few tries before its record counts as stale.
    for _ in range(3):
        if not _is_our_server(record.pid):
            break
        if _answers(record):
            return record
    with contextlib.suppress(FileNotFoundError):
        files.state.unlink()
    return None


class SharedServer:
    """A command's use of the shared server: `url`, `base_url`, and a lease until `release()`.

    It has the attributes the commands print about a started `LocalServer` (`model`,
    `base_url`, `start_seconds`, `rss_bytes()`), and says whether it was `reused`.
    """

    def __init__(
        self,
        model: ResolvedModel,
        record: ServerRecord,
        lease: IO[str],
        *,
        reused: bool,
        start_seconds: float | None,
        directory: Path,
    ) -> None:
        self.model = model
        self._directory = directory
        self.record = record
        self.reused = reused
        self.start_seconds = start_seconds
        self.url: str | None = record.url
        self._lease: IO[str] | None = lease

    @property
    def base_url(self) -> str:
        return self.record.base_url

    @property
    def pid(self) -> int:
        return self.record.pid

    def rss_bytes(self) -> int | None:
        return process_rss_bytes(self.record.pid)

    @property
    def files(self) -> ServerFiles:
        return ServerFiles.for_identity(self.record.identity, self._directory)

    def release(self) -> None:
        """End this command's use; the server stays for its keep-alive. Idempotent."""
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.close()  # closing the file drops its lock
        self.url = None


def acquire(
    model: ResolvedModel,
    identity: str,
    *,
    keep_alive: float,
    directory: Path | None = None,
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
    threads: int | None = None,
    say: Callable[[str], None] | None = None,
) -> SharedServer:
    """Use the machine's server of `model` (whose cache scope is `identity`), starting it
    if none serves it; the caller releases it. `keep_alive` is how long a server started
    here stays without users."""
    directory = directory or runtime_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    files = ServerFiles.for_identity(identity, directory)
    with locked(files.lock, fcntl.LOCK_EX | fcntl.LOCK_NB) as free:
        waited = not free
    if waited and say is not None:
        say(f"waiting for the embedded model {model.name} that another command is starting ...")
    with locked(files.lock):
        record = live_record(files)
        lease = open(files.users, "a+")  # noqa: SIM115 - held until release()
        fcntl.flock(lease, fcntl.LOCK_SH)
        if record is not None:
            return SharedServer(
                model, record, lease, reused=True, start_seconds=None, directory=directory
            )
        try:
            started = time.monotonic()
            record = _spawn(model, identity, files, keep_alive, start_timeout_s, threads)
            seconds = time.monotonic() - started
        except BaseException:
            lease.close()
            raise
        return SharedServer(
            model, record, lease, reused=False, start_seconds=seconds, directory=directory
        )


def _spawn(
    model: ResolvedModel,
    identity: str,
    files: ServerFiles,
    keep_alive: float,
    start_timeout_s: float,
    threads: int | None,
) -> ServerRecord:
    """Start the server in a session of its own (it outlives this command), wait until
    it answers, record it. The caller holds `files.lock`."""
    started = time.monotonic()
    require_xllamacpp()
    verify_resolved(model)
    command = [
        sys.executable,
        "-m",
        SERVER_MODULE,
        "--announce",
        "--no-verify",  # verified above, in the process that reports errors
        "--model-path",
        str(model.path),
        "--model-name",
        model.name,
        "--ctx",
        str(DEFAULT_CONTEXT),
        "--keep-alive",
        str(keep_alive),
        "--shared-files",
        str(files.stem),
    ]
    if threads:
        command += ["--threads", str(threads)]
    with open(files.log, "w") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C in the terminal is for the command, not it
        )

    def fail(reason: str) -> CowpError:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        tail = _log_tail(files.log)
        detail = f"\n  server log ({files.log}):\n{tail}" if tail else ""
        return CowpError(
            f"the embedded model server ({model.path}) {reason}.{detail}",
            hint="run 'cowp llm serve' to see it start, or point OPENAI_BASE_URL at "
            "another OpenAI-compatible server",
        )

    try:
        url = _wait_ready(process, files.log, started, start_timeout_s, fail)
        record = ServerRecord(
            pid=process.pid,
            url=url,
            model=model.name,
            identity=identity,
            model_path=str(model.path),
            keep_alive_s=keep_alive,
            started_at=time.time(),
        )
        while not _answers(record):
            if process.poll() is not None:
                raise fail(f"exited with code {process.returncode} before it answered")
            if time.monotonic() - started > start_timeout_s:
                raise fail(f"did not answer /health within {start_timeout_s:.0f} s")
            time.sleep(0.1)
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        raise
    write_record(files, record)
    return record


def _wait_ready(
    process: subprocess.Popen[bytes],
    log: Path,
    started: float,
    start_timeout_s: float,
    fail: Callable[[str], CowpError],
) -> str:
    """The URL from the server's ready line in its log."""
    while time.monotonic() - started < start_timeout_s:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith(READY_MARK):
                return str(json.loads(line[len(READY_MARK) :])["url"]).rstrip("/")
        if process.poll() is not None:
            raise fail(f"exited with code {process.returncode} before it was ready")
        time.sleep(0.1)
    raise fail(f"was not ready within {start_timeout_s:.0f} s")


def _log_tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-2000:].strip()
    except OSError:
        return ""


def servers(directory: Path | None = None) -> list[ServerRecord]:
    """The live shared servers in the runtime folder (stale records are removed)."""
    directory = directory or runtime_dir()
    found = []
    for state in sorted(directory.glob("server-*.json")) if directory.is_dir() else []:
        files = ServerFiles.at(state.with_suffix(""))
        with locked(files.lock):
            record = live_record(files)
        if record is not None:
            found.append(record)
    return found


def in_use(record: ServerRecord, directory: Path | None = None) -> bool:
    """Whether some command uses the server now."""
    files = ServerFiles.for_identity(record.identity, directory or runtime_dir())
    return not unused(files)


def stop_servers(directory: Path | None = None, grace_s: float = 15.0) -> list[ServerRecord]:
    """Stop every shared server (SIGTERM, then SIGKILL after `grace_s`); what was stopped."""
    directory = directory or runtime_dir()
    stopped = []
    for state in sorted(directory.glob("server-*.json")) if directory.is_dir() else []:
        record = stop_server(ServerFiles.at(state.with_suffix("")), grace_s=grace_s)
        if record is not None:
            stopped.append(record)
    return stopped


def stop_server(
    files: ServerFiles, *, grace_s: float = 15.0, only_if_unused: bool = False
) -> ServerRecord | None:
    """Stop the server of `files` (if `only_if_unused`, only when no command uses it);
    the record of the server stopped, None when none was."""
    with locked(files.lock):
        record = live_record(files)
        if record is None or (only_if_unused and not unused(files)):
            return None
        _end_process(record.pid, grace_s)
        with contextlib.suppress(FileNotFoundError):
            files.state.unlink()
    return record


def _end_process(pid: int, grace_s: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _is_our_server(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _is_our_server(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
