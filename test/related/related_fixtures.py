"""Test doubles for the related methods (DKPROMPT, LLM-State, LLM-guided search).

`ReplayVisionServer` is a real HTTP server on 127.0.0.1 that answers chat completions
with the replies in data/vision_replies.json, in order, and then with "yes" to every
numbered question of a request (built from the first reply as a template), so the real
`openai` client and our parsing run end to end. `ScriptedQuestioner` is the in-process
double of a vision model for the loop tests: regex rules over the question, with an
optional number of times a rule answers before it falls through.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cowp_ros.llm.language_model import Usage
from cowp_ros.methods.dkprompt.questions import Answer

DATA = Path(__file__).resolve().parent / "data"


def recorded_replies() -> list[dict[str, Any]]:
    return json.loads((DATA / "vision_replies.json").read_text())["replies"]


class ReplayVisionServer:
    """Loopback chat-completions server: recorded replies first, then all-yes ones."""

    def __init__(self, replies: Sequence[dict[str, Any]], status: int = 200) -> None:
        self.queue = [copy.deepcopy(r) for r in replies]
        self.template = copy.deepcopy(recorded_replies()[0])
        self.status = status
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # /v1/models
                self._send(
                    200, {"object": "list", "data": [{"id": "replay-vlm", "object": "model"}]}
                )

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(request)
                if server.status != 200:
                    self._send(server.status, {"error": {"message": "model does not take images"}})
                    return
                self._send(200, server.queue.pop(0) if server.queue else server.all_yes(request))

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def all_yes(self, request: dict[str, Any]) -> dict[str, Any]:
        text = request["messages"][-1]["content"][0]["text"]
        count = len(re.findall(r"^\d+\. ", text, flags=re.MULTILINE))
        reply = copy.deepcopy(self.template)
        reply["choices"][0]["message"]["content"] = "\n".join(
            f"{i}. yes" for i in range(1, count + 1)
        )
        return reply

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@dataclass
class ScriptedQuestioner:
    """A `VisualQuestioner` double: (pattern, answer, times) rules; default yes.

    `times` None answers forever; a number answers that many times and then the rule
    is spent (a cup that was not visible at first, and is after the robot looked).
    """

    rules: list[tuple[str, Answer, int | None]] = field(default_factory=list)
    default: Answer = Answer.YES
    name: str = "scripted-vlm"
    usage: Usage = field(default_factory=Usage)
    asked: list[tuple[str, Answer]] = field(default_factory=list)
    images: list[object] = field(default_factory=list)

    def ask(self, questions: Sequence[str], image: object | None) -> list[Answer]:
        self.usage.calls += 1
        self.images.append(image)
        answers = []
        for question in questions:
            answer = self.default
            for index, (pattern, rule_answer, times) in enumerate(self.rules):
                if re.search(pattern, question, flags=re.IGNORECASE) and times != 0:
                    answer = rule_answer
                    if times is not None:
                        self.rules[index] = (pattern, rule_answer, times - 1)
                    break
            self.asked.append((question, answer))
            answers.append(answer)
        return answers


@dataclass
class EveryStepImage:
    """An image source that has a picture for every check (and logs the requests)."""

    requests: list[tuple[int, str, str]] = field(default_factory=list)

    def image_for(self, attempt: int, step: Any, moment: str) -> object:
        self.requests.append((attempt, str(step), moment))
        return f"frame {attempt} {moment}"
