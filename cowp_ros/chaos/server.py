"""A scripted OpenAI-compatible server on 127.0.0.1: every answer, delay and failure chosen.

The fault-injection harness and the tests need a language-model server that misbehaves
on purpose and exactly when told: a chat completion with a NaN log-probability, a 10 MB
answer, an HTTP 429 with `Retry-After`, an answer that never comes, a body that drips a
byte at a time, a connection reset, a server that dies mid-run. A real model cannot be
made to do any of that, and a mock of the `openai` client would skip the transport,
which is where half of these faults live. So this is a real HTTP server on loopback,
answering from a `Responder` (a function from the request to a `Reply`) or, by default,
from a FIFO of replies that a test fills.

    with ScriptedLLMServer() as server:
        server.reply(completion("Yes", [("Yes", -0.1), ("No", -2.3)]))
        ... OPENAI_BASE_URL=server.url ...

`kill()` is the server dying under its clients: it stops listening and resets every open
connection, so a client sees what it would see if the process had been SIGKILLed.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

DRIP_CHUNK = 64
"""Bytes per write of a dripping body."""


@dataclass(frozen=True)
class Reply:
    """What the server does with one request.

    `body`: bytes as they are, a str as UTF-8 (to send JSON a serializer would refuse,
    e.g. a bare `NaN`), anything else as JSON. `delay_s` passes before the status line;
    `hang` never answers (until the server is closed or killed); `drip_s` sends the body
    in `DRIP_CHUNK`-byte pieces that far apart; `reset` closes the connection with a TCP
    reset instead of answering; `length` overrides the Content-Length header (a lie).
    """

    status: int = 200
    body: Any = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    hang: bool = False
    drip_s: float = 0.0
    reset: bool = False
    content_type: str = "application/json"
    length: int | None = None

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8", errors="surrogatepass")
        return json.dumps(self.body).encode()


@dataclass(frozen=True)
class Request:
    """One request as the server read it (`json` is None when the body is not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None
    number: int = 0
    """1-based arrival order across the server's life."""

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.route.endswith("/chat/completions")

    @property
    def route(self) -> str:
        """The path without its query (a key may come in the query: `?api_key=...`)."""
        return self.path.split("?", 1)[0].rstrip("/")

    @property
    def max_tokens(self) -> int:
        value = self.json.get("max_tokens") if isinstance(self.json, dict) else None
        return value if isinstance(value, int) else 16

    @property
    def wants_logprobs(self) -> bool:
        return isinstance(self.json, dict) and bool(self.json.get("logprobs"))

    @property
    def last_user_text(self) -> str:
        """The last user message's text (the question), or ''."""
        messages = self.json.get("messages") if isinstance(self.json, dict) else None
        for message in reversed(messages or []):
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, list):  # vision requests: [{type: text, text}, ...]
                    return " ".join(
                        str(part.get("text", "")) for part in content if isinstance(part, dict)
                    )
        return ""


Responder = Callable[[Request], "Reply | None"]
"""Decides a reply; None falls through to the default (the FIFO, or the model list)."""


def completion(
    content: str | None,
    top: Sequence[tuple[str, Any]] | None = None,
    *,
    model: str = "scripted",
    prompt_tokens: int = 20,
    completion_tokens: int = 1,
    cached_tokens: int = 0,
    finish_reason: str = "length",
) -> dict[str, Any]:
    """A chat completion body as llama.cpp's server sends it.

    `top`: the first token's alternatives as (token, logprob) pairs; the logprob may be
    anything (a string, None, NaN) for tests of what a client does with garbage.
    """
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": finish_reason,
        "message": {"role": "assistant", "content": content},
    }
    if top is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]
        first_token, first_logprob = top[0] if top else ("", 0.0)
        choice["logprobs"] = {
            "content": [
                {
                    "token": first_token,
                    "logprob": first_logprob,
                    "bytes": None,
                    "top_logprobs": alternatives,
                }
            ]
        }
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


def json_text(body: Any) -> str:
    """JSON text that may hold NaN and Infinity (what a broken server sends)."""
    return json.dumps(body, allow_nan=True)


def yes_no_logprobs(p_yes: float) -> list[tuple[str, float]]:
    """First-token alternatives of a model that says yes with probability `p_yes`."""
    p_yes = min(max(p_yes, 1e-6), 1 - 1e-6)
    pairs = [("Yes", math.log(p_yes)), ("No", math.log(1 - p_yes))]
    return sorted(pairs, key=lambda pair: -pair[1])


class ScriptedLLMServer:
    """A loopback HTTP server answering from a responder or a FIFO of replies.

    `requests` records every request in arrival order; `url` is the OpenAI base URL
    (`http://127.0.0.1:PORT/v1`). Usable as a context manager; `close()` is idempotent.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        models: Iterable[str] = ("scripted",),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder = responder
        self.models = list(models)
        self.replies: list[Reply] = []
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._killed = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with contextlib.suppress(OSError):
                    super().finish()
                with server._lock:
                    server._connections.discard(self.connection)

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self.errors: list[str] = []
        """Exceptions in request handling other than a client going away."""
        self._httpd = _QuietServer((host, port), Handler, self.errors)
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])
        self.url = f"http://{host}:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="scripted-llm", daemon=True
        )
        self._thread.start()

    # --- scripting -----------------------------------------------------------------

    def reply(self, body: Any = b"", *, status: int = 200, delay: float = 0.0, **how: Any) -> None:
        """Queue the reply to the next request that the responder leaves to the FIFO."""
        with self._lock:
            self.replies.append(Reply(status=status, body=body, delay_s=delay, **how))

    @property
    def chat_requests(self) -> list[Request]:
        return [r for r in self.requests if r.is_chat]

    # --- serving -------------------------------------------------------------------

    def _default(self, request: Request) -> Reply:
        if request.method == "GET" and request.route.endswith("/models"):
            data = [{"id": name, "object": "model", "owned_by": "chaos"} for name in self.models]
            return Reply(body={"object": "list", "data": data})
        with self._lock:
            if self.replies:
                return self.replies.pop(0)
        return Reply(status=500, body={"error": {"message": "no scripted reply left"}})

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        try:
            length = int(handler.headers.get("content-length", 0) or 0)
        except ValueError:
            length = 0
        body = handler.rfile.read(length) if length > 0 else b""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        with self._lock:
            number = len(self.requests) + 1
            request = Request(
                method, handler.path, dict(handler.headers.items()), body, parsed, number
            )
            self.requests.append(request)
        reply = (self.responder(request) if self.responder else None) or self._default(request)
        self._send(handler, reply)

    def _send(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        connection = handler.connection
        if reply.reset:
            _reset(connection)
            handler.close_connection = True
            return
        if reply.hang:
            self._stopping.wait()
            _reset(connection)
            handler.close_connection = True
            return
        if reply.delay_s > 0 and self._stopping.wait(reply.delay_s):
            _reset(connection)
            handler.close_connection = True
            return
        data = reply.payload()
        try:
            handler.send_response(reply.status)
            handler.send_header("content-type", reply.content_type)
            handler.send_header(
                "content-length", str(reply.length if reply.length is not None else len(data))
            )
            for name, value in reply.headers:
                handler.send_header(name, value)
            handler.end_headers()
            if reply.drip_s <= 0:
                handler.wfile.write(data)
            else:
                for start in range(0, len(data), DRIP_CHUNK):
                    handler.wfile.write(data[start : start + DRIP_CHUNK])
                    handler.wfile.flush()
                    if self._stopping.wait(reply.drip_s):
                        _reset(connection)
                        break
            handler.wfile.flush()
        except OSError:  # the client gave up (timeouts), or kill() reset the connection
            handler.close_connection = True
        if reply.length is not None:
            handler.close_connection = True

    # --- ending --------------------------------------------------------------------

    def kill(self) -> None:
        """Die as a SIGKILLed server would: stop listening, reset every open connection."""
        if self._killed:
            return
        self._killed = True
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            _reset(connection)

    def close(self) -> None:
        """Stop the server (as kill(): nothing may wait on it afterwards)."""
        self.kill()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _QuietServer(ThreadingHTTPServer):
    """Clients that give up mid-exchange (a deadline, a reset) are what this server is
    for: their connection errors are expected, not printed; anything else is kept."""

    def __init__(self, address: tuple[str, int], handler: Any, errors: list[str]) -> None:
        super().__init__(address, handler)
        self.errors = errors

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        self.errors.append(repr(error))


def _reset(connection: socket.socket) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a killed process's sockets end."""
    with contextlib.suppress(OSError):
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        connection.close()


def wait_until(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.02) -> bool:
    """Poll `predicate` until true or `timeout_s` passes; returns its last value."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()
