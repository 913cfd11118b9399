"""Runs a `Scenario` as a user would (the `cowp` command, in its own process) and records a `Run`.

Each run gets a folder of its own and an environment that makes everything it leaves
findable: `COWP_CHAOS_MARK` (its processes, `processes.py`), a private TMPDIR (temporary
files it leaves), `COWP_PDDL_ARCHIVE` (every PDDL file a planner received),
`COWP_CACHE_DIR` and `COWP_REPORTS_DIR` (nothing is read from or written to the user's
answer cache or build folder). The scripted server runs in this process. While the
command runs, its processes' resident memory is sampled, and a scenario's signal is
sent when its trigger fires; a command still running at its bound plus a grace period
is killed and recorded as hung.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from cowp_ros.chaos import processes
from cowp_ros.chaos.record import Run, Scenario, Trigger
from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer

RUN_CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from cowp_ros.cli import main; sys.exit(main())"
)
"""`cowp` as a terminal runs it. Ctrl-C must raise KeyboardInterrupt even when the
campaign itself was started in the background (`make ... &`, nohup, CI), where the shell
makes SIGINT ignored and every child inherits that."""
GRACE_S = 30.0
"""How long past its bound a run may go before the harness kills it."""
KEEP_OUTPUT_BYTES = 64 * 1024
SECRET_PLACEHOLDER = "***"
CLEARED_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "COWP_PDDL_DIR")


def _reader(stream: object, keep: bytearray, total: list[int]) -> threading.Thread:
    def read() -> None:
        while True:
            chunk = stream.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            total[0] += len(chunk)
            room = KEEP_OUTPUT_BYTES - len(keep)
            if room > 0:
                keep.extend(chunk[:room])

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _sampler(mark: str, peak: list[int], stop: threading.Event) -> threading.Thread:
    def sample() -> None:
        while not stop.wait(0.1):
            peak[0] = max(peak[0], processes.family_rss(mark))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    return thread


def _counting(
    responder: Callable[[Request], Reply | None] | None,
    kill_after: int | None,
    server_box: list[ScriptedLLMServer],
    chats: list[int],
) -> Callable[[Request], Reply | None]:
    """Wrap a responder: count chat requests, and kill the server at the N-th."""

    def respond(request: Request) -> Reply | None:
        if request.is_chat:
            chats[0] += 1
            if kill_after is not None and chats[0] >= kill_after:
                threading.Thread(target=server_box[0].kill, daemon=True).start()
                return Reply(reset=True)
        return responder(request) if responder else None

    return respond


def _fire(
    trigger: Trigger, proc: subprocess.Popen[bytes], mark: str, chats: list[int]
) -> threading.Thread:
    def wait_and_send() -> None:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if trigger.after_requests is not None and chats[0] >= trigger.after_requests:
                break
            if trigger.after_process is not None and any(
                trigger.after_process in p.command for p in processes.marked(mark)
            ):
                break
            time.sleep(0.05)
        time.sleep(trigger.delay_s)
        with contextlib.suppress(ProcessLookupError):
            if proc.poll() is None:
                proc.send_signal(trigger.signal)

    thread = threading.Thread(target=wait_and_send, daemon=True)
    thread.start()
    return thread


def _shown(arg: str | bytes, secrets: tuple[str, ...]) -> str:
    text = arg.decode("utf-8", errors="replace") if isinstance(arg, bytes) else arg
    for secret in secrets:
        text = text.replace(secret, SECRET_PLACEHOLDER)
    return text if len(text) <= 80 else text[:77] + "..."


def execute(
    scenario: Scenario,
    folder: Path,
    *,
    number: int,
    kind: str,
    family: str,
    seed: str,
    secret: str,
    canaries: tuple[str, ...],
) -> Run:
    """Run `scenario` in `folder` (made empty first) and record what happened."""
    folder = folder.resolve()  # the command runs inside it: `{folder}` must be absolute
    shutil.rmtree(folder, ignore_errors=True)
    for sub in ("tmp", "pddl", "cache", "reports"):
        (folder / sub).mkdir(parents=True)
    mark = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env.update(
        {
            processes.MARK_ENV: mark,
            "TMPDIR": str(folder / "tmp"),
            "COWP_PDDL_ARCHIVE": str(folder / "pddl"),
            "COWP_CACHE_DIR": str(folder / "cache"),
            "COWP_REPORTS_DIR": str(folder / "reports"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(scenario.env)
    chats = [0]
    server_box: list[ScriptedLLMServer] = []
    server: ScriptedLLMServer | None = None
    if scenario.responder is not None or scenario.kill_server_after is not None:
        server = ScriptedLLMServer(
            _counting(scenario.responder, scenario.kill_server_after, server_box, chats)
        )
        server_box.append(server)
        url = server.url
    else:  # a port nobody listens on: connections are refused
        url = "http://127.0.0.1:9/v1"
    if scenario.key_in_url:
        url = url.replace("http://", f"http://chaos:{secret}@", 1)
    args = [a.replace("{url}", url) if isinstance(a, str) else a for a in scenario.args]
    args = [a.replace("{folder}", str(folder)) if isinstance(a, str) else a for a in args]
    secrets = (secret,)
    run = Run(
        number=number,
        kind=kind,
        family=family,
        seed=seed,
        command=["cowp", *(_shown(a, secrets) for a in args)],
        bound_s=scenario.bound_s,
        report_expected=scenario.report,
        secrets=secrets,
        canaries=canaries,
        note=scenario.note,
        max_rss_bytes=scenario.max_rss_bytes,
        expect=dict(scenario.expect),
    )
    stdout, stderr, total = bytearray(), bytearray(), [0]
    peak, stop = [0], threading.Event()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN_CLI, *args],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        readers = [_reader(proc.stdout, stdout, total), _reader(proc.stderr, stderr, total)]
        _sampler(mark, peak, stop)
        if scenario.trigger is not None:
            _fire(scenario.trigger, proc, mark, chats)
        try:
            run.exit_code = proc.wait(timeout=scenario.bound_s + GRACE_S)
        except subprocess.TimeoutExpired:
            processes.kill_all(mark)
            proc.kill()
            proc.wait()
            run.exit_code = None
        run.wall_s = time.monotonic() - started
        for reader in readers:
            reader.join(timeout=5)
    finally:
        stop.set()
        if server is not None:
            server.close()
    left = processes.wait_until_gone(mark, 3.0)
    run.leftover_processes = [f"{p.pid}: {p.command}" for p in left]
    processes.kill_all(mark)
    run.leftover_files = sorted(p.name for p in (folder / "tmp").iterdir())
    run.stdout, run.stderr, run.output_bytes = bytes(stdout), bytes(stderr), total[0]
    (folder / "stdout.txt").write_bytes(run.stdout)
    (folder / "stderr.txt").write_bytes(run.stderr)
    run.peak_rss_bytes = peak[0]
    fired = getattr(scenario.responder, "fired", None)
    if scenario.kill_server_after is not None:
        fired = 1 if chats[0] >= scenario.kill_server_after else 0
    run.faults_fired = fired
    run.pddl_files = sorted((folder / "pddl").glob("*.pddl"))
    reports = sorted((folder / "reports").glob("*.json"))
    explicit = folder / "report.json"
    run.report_path = explicit if explicit.is_file() else (reports[-1] if reports else None)
    run.written_files = [
        p
        for sub in ("reports", "cache", "logs")
        for p in sorted((folder / sub).rglob("*"))
        if p.is_file()
    ] + ([explicit] if explicit.is_file() else [])
    graph = folder / "graph.json"
    if graph.is_file():
        with contextlib.suppress(ValueError):
            run.observed = json.loads(graph.read_text())
    run.observed["questions"] = chats[0]
    if isinstance(run.observed.get("faults_fired"), int | float):  # a graph or peer run's own
        run.faults_fired = int(run.observed["faults_fired"])
    run.outcome = run.read_outcome()
    return run
