"""Test doubles for DKPROMPT's tests.

`ReplayVisionServer` is the scripted server on 127.0.0.1 (`cowp_ros.chaos.server`),
answering chat completions with the replies in data/vision_replies.json, in order, and
then with "yes" to every numbered question of a request (built from the first reply as
a template), so the real `openai` client and our parsing run end to end.
`ScriptedQuestioner` is the in-process double of a vision model for the loop tests:
regex rules over the question, with an optional number of times a rule answers before
it falls through.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer
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
        self._server = ScriptedLLMServer(self._respond, models=("replay-vlm",))
        self.url = self._server.url

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The chat requests' JSON bodies, in order."""
        return [request.json for request in self._server.chat_requests]

    def _respond(self, request: Request) -> Reply | None:
        if not request.is_chat:
            return None  # /v1/models: the server lists replay-vlm
        if self.status != 200:
            return Reply(self.status, {"error": {"message": "model does not take images"}})
        return Reply(body=self.queue.pop(0) if self.queue else self.all_yes(request.json))

    def all_yes(self, request: dict[str, Any]) -> dict[str, Any]:
        text = request["messages"][-1]["content"][0]["text"]
        count = len(re.findall(r"^\d+\. ", text, flags=re.MULTILINE))
        reply = copy.deepcopy(self.template)
        reply["choices"][0]["message"]["content"] = "\n".join(
            f"{i}. yes" for i in range(1, count + 1)
        )
        return reply

    def close(self) -> None:
        self._server.close()


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
