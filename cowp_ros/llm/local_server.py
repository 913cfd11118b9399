"""The embedded LLM: llama.cpp's OpenAI-compatible server, run by xllamacpp.

Two ways to run it:

* `serve_forever(...)` runs the server in this process until Ctrl-C (`cowp llm serve`).
* `LocalServer` runs it in a child process (`python -m cowp_ros.llm.local_server`)
  and waits until it answers. The stack uses this on demand (see `endpoint.py`): a
  child can be stopped for certain, gives its 1.9 GB back on exit, and a crash in
  native code cannot take the caller with it.

Either way the server listens on 127.0.0.1 only (port 0 picks a free port), with a 2048
token context (llama.cpp's default of 32k wastes memory for one-line questions), one
thread per core, `offline=True` (never contacts a hub) and no web UI. The model file is
verified (pinned sha256 and GGUF header, see `model_store`) before it is loaded.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from cowp_ros.errors import CowpError, Terminated
from cowp_ros.llm.model_store import ResolvedModel, resolve_model, verify_resolved

READY_MARK = "COWP_LLM_READY "
DEFAULT_CONTEXT = 2048
DEFAULT_START_TIMEOUT_S = 180.0
"""Loading 1.1 GB takes about 6 s idle; a loaded 2-core CI machine can take far longer."""


@dataclass(frozen=True)
class ServerOptions:
    """How to run the embedded server."""

    model_path: Path
    model_name: str
    host: str = "127.0.0.1"
    port: int = 0
    n_ctx: int = DEFAULT_CONTEXT
    threads: int | None = None
    """None: one per core available to this process."""


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def port_is_free(host: str, port: int) -> bool:
    """Whether `port` can be bound on `host` now (port 0 always can)."""
    if port == 0:
        return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def require_xllamacpp() -> None:
    """Fail with the fix when the embedded server's package is not installed."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise CowpError(
            "the embedded LLM server (xllamacpp) is not installed.",
            hint="run 'make setup' (or scripts/setup.d/llm_model.sh), or set OPENAI_BASE_URL "
            "to an OpenAI-compatible server",
        )


def _start_in_process(options: ServerOptions) -> Any:
    """Create the xllamacpp server (it loads the model and listens before returning)."""
    require_xllamacpp()
    import xllamacpp  # imported late: a 34 MB native module the rest of the stack never needs

    if not port_is_free(options.host, options.port):
        raise CowpError(
            f"cannot start the local LLM server: port {options.port} on {options.host} "
            "is already in use.",
            hint="choose another --port, or leave it out to take a free one",
        )
    params = xllamacpp.CommonParams()
    params.model.path = str(options.model_path)
    params.model_alias = {options.model_name}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_ctx = options.n_ctx
    threads = options.threads or _cpu_count()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_parallel = 1
    params.cache_prompt = True  # the shared system prompt is evaluated once
    params.offline = True
    params.ui = False
    params.verbosity = 0
    try:
        return xllamacpp.Server(params)
    except RuntimeError as err:
        raise CowpError(
            f"the local LLM server did not start ({err}) with model {options.model_path}.",
            hint="check the model file with 'cowp llm provision', and that the port is free",
        ) from err


def serve_forever(
    options: ServerOptions,
    *,
    announce: bool = False,
    should_stop: Callable[[], bool] | None = None,
) -> None:
    """Run the server here until SIGINT/SIGTERM, or until `should_stop()` (asked every
    half second: a shared server's idle rule, see `shared_server.IdleStop`) says so;
    print the URL once it is listening."""
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server = _start_in_process(options)
        url = str(server.listening_address)
        if announce:  # machine-readable line for the parent `LocalServer`
            record = {"url": url, "model": options.model_name, "pid": os.getpid()}
            print(READY_MARK + json.dumps(record), flush=True)
        else:
            print(f"local LLM {options.model_name} listening on {url}/v1", flush=True)
            print("OpenAI clients: OPENAI_BASE_URL=" + url + "/v1 (any API key)", flush=True)
            print("Ctrl-C stops it.", flush=True)
        while not stop.wait(0.5):
            if should_stop is not None and should_stop():
                break
        del server  # the destructor stops the HTTP loop and frees the model
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def process_rss_bytes(pid: int) -> int | None:
    """Resident memory of a process (Linux /proc), None where unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


STOP_GRACE_S = 0.05
"""How long an interrupted owner waits for the server before killing it."""

PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
"""Loaded at import: after fork, in the child, only the prctl call itself may run."""


def _die_with_parent() -> None:
    """In the server child, before exec: ask Linux to SIGTERM it when its parent dies.

    stop() ends the server whenever its owner exits normally; this covers the owner
    being killed (SIGKILL, or SIGTERM without cleanup), which would otherwise leave a
    1.8 GB server running on its own.
    """
    if _LIBC is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalServer:
    """The embedded server in a child process: `with LocalServer(model) as server: server.url`.

    `start()` returns once the server answers `/health`; `stop()` terminates the child
    (and kills it if it does not exit in a few seconds). `start_seconds` and
    `rss_bytes()` are what `cowp llm eval` reports.
    """

    def __init__(
        self,
        model: ResolvedModel | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        n_ctx: int = DEFAULT_CONTEXT,
        threads: int | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        verify: bool = True,
    ) -> None:
        self.model = model or resolve_model()
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.threads = threads
        self.start_timeout_s = start_timeout_s
        self.verify = verify
        self.url: str | None = None
        """`http://127.0.0.1:PORT` once started; OpenAI clients use `url + "/v1"`."""
        self.start_seconds: float | None = None
        self._process: subprocess.Popen[str] | None = None
        self._log: Any = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`.../v1`)."""
        if self.url is None:
            raise CowpError("the local LLM server is not running.")
        return self.url + "/v1"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def rss_bytes(self) -> int | None:
        """Resident memory of the server process now."""
        return process_rss_bytes(self._process.pid) if self._process else None

    def start(self) -> LocalServer:
        """Verify the model, start the child, wait until it is ready."""
        started = time.monotonic()
        require_xllamacpp()
        if self.verify:
            verify_resolved(self.model)
        if not port_is_free(self.host, self.port):
            raise CowpError(
                f"cannot start the local LLM server: port {self.port} on {self.host} "
                "is already in use.",
                hint="choose another port, or use 0 to take a free one",
            )
        command = [
            sys.executable,
            "-m",
            "cowp_ros.llm.local_server",
            "--announce",
            "--no-verify",  # verified above, in the process that reports errors
            "--model-path",
            str(self.model.path),
            "--model-name",
            self.model.name,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--ctx",
            str(self.n_ctx),
        ]
        if self.threads:
            command += ["--threads", str(self.threads)]
        # Lives as long as the child; closed in stop(), read in _fail().
        self._log = tempfile.TemporaryFile(mode="w+", prefix="cowp-llm-server-")  # noqa: SIM115
        self._process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
            text=True,
            preexec_fn=_die_with_parent,
        )
        record = self._wait_for_ready_line(started)
        self.url = str(record["url"]).rstrip("/")
        self._wait_for_health(started)
        self.start_seconds = time.monotonic() - started
        return self

    def _fail(self, reason: str) -> CowpError:
        log_tail = ""
        if self._log is not None:
            self._log.seek(0)
            log_tail = self._log.read()[-2000:].strip()
        self.stop()
        detail = f"\n  server log:\n{log_tail}" if log_tail else ""
        return CowpError(
            f"the local LLM server ({self.model.path}) {reason}.{detail}",
            hint="run 'cowp llm serve' to see it start, or point OPENAI_BASE_URL at "
            "another OpenAI-compatible server",
        )

    def _wait_for_ready_line(self, started: float) -> dict[str, Any]:
        """Read the child's stdout until its ready line, with a deadline."""
        assert self._process is not None and self._process.stdout is not None
        lines: list[str] = []
        reader = threading.Thread(
            target=lambda: lines.extend(iter(self._process.stdout.readline, "")),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        while time.monotonic() - started < self.start_timeout_s:
            for line in lines:
                if line.startswith(READY_MARK):
                    return dict(json.loads(line[len(READY_MARK) :]))
            if self._process.poll() is not None:
                reader.join(timeout=1.0)
                for line in lines:
                    if line.startswith(READY_MARK):
                        return dict(json.loads(line[len(READY_MARK) :]))
                message = "".join(lines).strip()
                raise self._fail(
                    f"exited with code {self._process.returncode} before it was ready"
                    + (f": {message}" if message else "")
                )
            time.sleep(0.05)
        raise self._fail(f"was not ready within {self.start_timeout_s:.0f} s")

    def _wait_for_health(self, started: float) -> None:
        while time.monotonic() - started < self.start_timeout_s:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise self._fail(f"did not answer /health within {self.start_timeout_s:.0f} s")

    def stop(self, grace_s: float = 15.0) -> None:
        """Terminate the child (killed if it is not gone within `grace_s`); idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process is not None and process.stdout is not None:
            process.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        self.url = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # After Ctrl-C or SIGTERM the user is waiting: the server would first finish
        # the answer it is generating (seconds on a busy CPU), and nothing is lost by
        # not waiting for it, so it gets STOP_GRACE_S and is then killed.
        interrupted = exc_type is not None and issubclass(exc_type, (KeyboardInterrupt, Terminated))
        self.stop(STOP_GRACE_S if interrupted else 15.0)


def main(argv: list[str] | None = None) -> int:
    """Child-process entry point used by `LocalServer` (and handy for debugging)."""
    parser = argparse.ArgumentParser(description="Run the embedded OpenAI-compatible LLM.")
    parser.add_argument("--model-path", default=None)
    parser.add_argument("--model-name", default=None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ctx", type=int, default=DEFAULT_CONTEXT)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--announce", action="store_true", help="print a JSON ready line")
    parser.add_argument("--no-verify", action="store_true", help="skip the sha256 check")
    parser.add_argument(
        "--shared-files", default=None, help="a shared server's runtime files (their stem)"
    )
    parser.add_argument(
        "--keep-alive", type=float, default=0.0, help="a shared server's seconds without users"
    )
    args = parser.parse_args(argv)
    try:
        model = resolve_model(args.model_path, None if args.model_path else args.model_name)
        if not args.no_verify:
            verify_resolved(model)
        options = ServerOptions(
            model_path=model.path,
            model_name=args.model_name or model.name,
            host=args.host,
            port=args.port,
            n_ctx=args.ctx,
            threads=args.threads,
        )
        should_stop = None
        if args.shared_files:
            from cowp_ros.llm.server_files import IdleStop, ServerFiles

            should_stop = IdleStop(ServerFiles.at(Path(args.shared_files)), args.keep_alive)
        serve_forever(options, announce=args.announce, should_stop=should_stop)
    except CowpError as err:
        print(f"local_server: error: {err}", file=sys.stderr)
        print(f"local_server: error: {err}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
