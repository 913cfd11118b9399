"""A slow OpenAI-compatible server on 127.0.0.1: every question is answered "Yes", after
`delay_s`. It stands in for a model that thinks for a long time, so a graph test can
cancel a task while the commonsense node is waiting on it."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "slow-test-model"


def _yes() -> dict[str, Any]:
    top = [{"token": "Yes", "logprob": -0.1, "bytes": None}]
    return {
        "id": "chatcmpl-slow",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": "Yes"},
                "logprobs": {
                    "content": [
                        {"token": "Yes", "logprob": -0.1, "bytes": None, "top_logprobs": top}
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }


class SlowModelServer:
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.asked = 0
        self.answering = threading.Event()  # set once a question is being thought about
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                server.asked += 1
                server.answering.set()
                time.sleep(server.delay_s)
                self._send(_yes())

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
