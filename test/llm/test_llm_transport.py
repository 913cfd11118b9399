"""Every model client goes through one transport: the vision questioner and the
embeddings client get the language model's deadline, size cap and key hiding.

Each test drives a real client against the scripted loopback server with the fault
the transport exists for; before the transport, the vision client went through the
`openai` SDK (no deadline on a dripping body, SDK exceptions escaping as they were).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from cowp_ros.chaos.server import ScriptedLLMServer, completion
from cowp_ros.errors import CowpError
from cowp_ros.llm.completion import MAX_REPLY_BYTES
from cowp_ros.llm.embeddings import ServerEmbedder
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.dkprompt.questions import Answer
from cowp_ros.methods.dkprompt.vision import EncodedImage, OpenAIVisionQuestioner

SECRET = "sk-vision-7f21c9aa"


def _vision(url: str, timeout_s: float = 5.0, api_key: str = "test") -> OpenAIVisionQuestioner:
    settings = LLMSettings(
        base_url=url, model="vlm", api_key=api_key, timeout_s=timeout_s, cache_path=None
    )
    return OpenAIVisionQuestioner(settings, max_retries=0)


def _frame() -> EncodedImage:
    return EncodedImage.from_array(np.zeros((4, 4, 3), dtype=np.uint8), "test frame")


def test_the_vision_client_reads_a_chat_completion(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("1. yes\n2. no"))
    questioner = _vision(scripted.url)
    assert questioner.ask(["Is the cup held?", "Is the tap on?"], _frame()) == [
        Answer.YES,
        Answer.NO,
    ]
    assert questioner.usage.calls == 1


def test_a_dripping_vision_answer_is_cut_at_the_deadline(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("1. yes"), drip_s=0.2)  # ~300 bytes, 64 every 0.2 s: ~1 s
    questioner = _vision(scripted.url, timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(CowpError, match=r"the vision server at .* did not answer within 0\.5 s"):
        questioner.ask(["Is the cup held?"], _frame())
    assert time.monotonic() - started < 1.0


def test_an_oversized_vision_answer_is_refused(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("1. yes " + "x" * (MAX_REPLY_BYTES + 10)))
    with pytest.raises(CowpError, match="too large"):
        _vision(scripted.url).ask(["Is the cup held?"], _frame())


def test_a_vision_key_never_shows_in_its_errors(scripted: ScriptedLLMServer) -> None:
    url = scripted.url.replace("http://", f"http://robot:{SECRET}@")
    scripted.reply({"error": {"message": f"model overloaded for key {SECRET}"}}, status=400)
    with pytest.raises(CowpError) as caught:
        _vision(url).ask(["Is the cup held?"], _frame())
    text = f"{caught.value} {caught.value.hint}"
    assert SECRET not in text and "robot:***@" in text and "accept images" in text
    scripted.close()
    with pytest.raises(CowpError, match="cannot reach the vision server") as unreachable:
        _vision(url).ask(["Is the cup held?"], _frame())
    assert SECRET not in str(unreachable.value)


def test_a_vision_reply_that_is_no_completion_is_a_clear_error(
    scripted: ScriptedLLMServer,
) -> None:
    scripted.reply({"choices": []})
    with pytest.raises(CowpError, match=r"not a usable chat completion .*no choices"):
        _vision(scripted.url).ask(["Is the cup held?"], _frame())


def _embeddings(vectors: list[list[float]]) -> dict[str, object]:
    return {"data": [{"index": i, "embedding": v} for i, v in reversed(list(enumerate(vectors)))]}


def test_the_embeddings_client_orders_rows_by_index(scripted: ScriptedLLMServer) -> None:
    scripted.reply(_embeddings([[1.0, 0.0], [0.0, 2.0]]))
    embedder = ServerEmbedder(scripted.url, "minilm")
    rows = embedder.embed(["cup", "mug"])
    assert rows.tolist() == [[1.0, 0.0], [0.0, 1.0]]  # unit length, in input order
    (request,) = [r for r in scripted.requests if r.method == "POST"]
    assert request.path.endswith("/embeddings")


@pytest.mark.parametrize(
    "body",
    [
        {"data": [{"index": 0, "embedding": [1.0]}]},  # one vector for two texts
        {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]},
        {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
        {"data": [{"index": 0, "embedding": ["a"]}, {"index": 1, "embedding": [1.0]}]},
        {"error": "no"},
    ],
)
def test_an_unusable_embeddings_reply_is_a_clear_error(
    scripted: ScriptedLLMServer, body: object
) -> None:
    scripted.reply(body)
    with pytest.raises(CowpError, match=r"embeddings server .* not a usable embeddings reply"):
        ServerEmbedder(scripted.url, "minilm").embed(["cup", "mug"])


def test_an_embeddings_server_that_hangs_ends_at_the_deadline(scripted: ScriptedLLMServer) -> None:
    scripted.reply(hang=True)
    embedder = ServerEmbedder(scripted.url, "minilm", timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(CowpError, match=r"did not answer within 0\.5 s"):
        embedder.embed(["cup"])
    assert time.monotonic() - started < 1.0


def test_a_key_in_the_url_query_goes_after_each_request_path(
    scripted: ScriptedLLMServer,
) -> None:
    """A server that takes its key in the query gets it where a query belongs: after
    `/chat/completions`, not inside the path (`/v1?api_key=.../chat/completions`)."""
    scripted.reply(completion("1. yes"))
    questioner = _vision(f"{scripted.url}?api_key={SECRET}")
    assert questioner.ask(["Is the cup held?"], _frame()) == [Answer.YES]
    path = scripted.requests[-1].path
    assert path.endswith(f"/chat/completions?api_key={SECRET}"), path
    assert f"?api_key={SECRET}/" not in path
