"""DKPROMPT's questions to any OpenAI-compatible vision-language model, in one call.

The image travels as an `image_url` content part holding a base64 data URI (what the
OpenAI chat-completions API, vLLM, llama.cpp's multimodal server and Ollama's
OpenAI endpoint all accept), the questions as one numbered list, and the reply is read
line by line ("1. yes", "2) No", "3: skip"). A line that is missing or says neither
yes nor no is a skip: an unreadable answer must not change the robot's state.

The embedded model cowp_ros ships is text-only, so this needs a server the user names
(`--vlm-url`). Requests go through the same `ModelTransport` as the language model's
(deadline, retries, size caps, keys hidden in every message); the tests replay recorded
chat-completion replies from a local HTTP server.
"""

from __future__ import annotations

import base64
import io
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.llm.completion import ReplyError, parse_chat_reply, parse_model_ids
from cowp_ros.llm.language_model import Usage
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.llm.transport import VISION_MODEL, ModelTransport
from cowp_ros.methods.dkprompt.questions import Answer

VISION_SYSTEM = (
    "You check a household robot's plan against what its wrist camera sees. Answer each "
    "numbered question about the image with yes, no or skip (skip when the image does "
    "not show it). Write one line per question, like '1. yes'."
)
MIME_BY_SUFFIX = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
}
MAX_IMAGE_BYTES = 20 * 1024 * 1024
_LINE = re.compile(r"^\s*(?:q(?:uestion)?\s*)?(\d+)\s*[.):\-]\s*(.*)$", re.IGNORECASE)
_YES = frozenset({"yes", "true", "y"})
_NO = frozenset({"no", "false", "n"})


@dataclass(frozen=True)
class EncodedImage:
    """Image bytes and their MIME type, ready for a data URI."""

    data: bytes
    mime: str = "image/png"
    source: str = ""

    @classmethod
    def from_path(cls, path: Path | str) -> EncodedImage:
        path = Path(path)
        mime = MIME_BY_SUFFIX.get(path.suffix.lower())
        if mime is None:
            raise CowpError(
                f"{path}: not an image type DKPROMPT sends ({', '.join(MIME_BY_SUFFIX)})"
            )
        try:
            data = path.read_bytes()
        except OSError as err:
            raise CowpError(f"cannot read image {path}: {err.strerror}") from err
        if len(data) > MAX_IMAGE_BYTES:
            raise CowpError(f"{path}: larger than {MAX_IMAGE_BYTES // 2**20} MiB")
        return cls(data, mime, str(path))

    @classmethod
    def from_array(cls, pixels: Any, source: str = "array") -> EncodedImage:
        """An RGB uint8 array (the camera's frame) as PNG."""
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG")
        return cls(buffer.getvalue(), "image/png", source)

    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def questions_prompt(questions: Sequence[str]) -> str:
    numbered = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
    return f"Answer each question about the image with yes, no or skip.\n{numbered}"


def parse_answers(text: str, count: int) -> list[Answer]:
    """One `Answer` per question from numbered lines; missing or unclear ones skip.

    A one-question reply may be a bare "Yes." without a number.
    """
    answers = [Answer.SKIP] * count
    seen_numbered = False
    for line in text.splitlines():
        found = _LINE.match(line)
        if not found:
            continue
        seen_numbered = True
        index = int(found.group(1)) - 1
        if 0 <= index < count and answers[index] is Answer.SKIP:
            answers[index] = _verdict(found.group(2))
    if not seen_numbered and count == 1:
        answers[0] = _verdict(text)
    return answers


def _verdict(text: str) -> Answer:
    words = re.findall(r"[a-z]+", text.lower())
    first = words[0] if words else ""
    if first in _YES:
        return Answer.YES
    if first in _NO:
        return Answer.NO
    return Answer.SKIP


class OpenAIVisionQuestioner:
    """`VisualQuestioner` over an OpenAI-compatible chat server with image input."""

    def __init__(self, settings: LLMSettings, *, max_retries: int = 1) -> None:
        if not settings.configured:
            raise CowpError(
                "DKPROMPT needs a vision-language model server, and none is configured.",
                hint="pass --vlm-url (an OpenAI-compatible /v1 endpoint whose model takes "
                "images); the embedded model is text-only",
            )
        self.settings = settings
        self._transport = ModelTransport(settings, VISION_MODEL, max_retries=max_retries)
        self.base_url = self._transport.base_url  # a key in the URL stays hidden
        self._model = settings.model
        self.usage = Usage()

    @property
    def name(self) -> str:
        if self._model is None:
            try:
                ids = parse_model_ids(self._transport.get("/models"))
            except ReplyError as err:
                raise self._transport.garbage(str(err)) from None
            if not ids:
                raise CowpError(f"the vision server at {self.base_url} lists no models")
            self._model = self._transport.model = ids[0]
        return self._model

    def ask(self, questions: Sequence[str], image: object | None) -> list[Answer]:
        if not questions:
            return []
        if not isinstance(image, EncodedImage):
            raise CowpError("DKPROMPT questions need an EncodedImage")
        content: list[dict[str, Any]] = [
            {"type": "text", "text": questions_prompt(questions)},
            {"type": "image_url", "image_url": {"url": image.data_uri()}},
        ]
        max_tokens = 6 * len(questions) + 16
        payload = {
            "model": self.name,
            "messages": [
                {"role": "system", "content": VISION_SYSTEM},
                {"role": "user", "content": content},
            ],
            "max_tokens": max_tokens,
            "temperature": 0.0,
        }
        started = time.monotonic()
        body = self._transport.post("/chat/completions", payload)
        try:
            reply = parse_chat_reply(body, max_tokens=max_tokens)
        except ReplyError as err:
            raise self._transport.garbage(str(err)) from None
        self.usage.calls += 1
        self.usage.seconds += time.monotonic() - started
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        return parse_answers(reply.text, len(questions))

    def close(self) -> None:
        """Release the HTTP connections."""
        self._transport.close()


__all__ = [
    "VISION_SYSTEM",
    "EncodedImage",
    "OpenAIVisionQuestioner",
    "parse_answers",
    "questions_prompt",
]
