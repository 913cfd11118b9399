"""DKPROMPT over HTTP: the real `openai` client against a local replay server."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from dkprompt_fixtures import ReplayVisionServer, recorded_replies

from cowp_ros.cli import main
from cowp_ros.errors import CowpError
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.dkprompt.questions import Answer
from cowp_ros.methods.dkprompt.vision import (
    EncodedImage,
    OpenAIVisionQuestioner,
    parse_answers,
)


def _settings(url: str) -> LLMSettings:
    return LLMSettings(base_url=url, model=None, api_key="test", timeout_s=10, cache_path=None)


def _frame() -> EncodedImage:
    pixels = np.zeros((8, 8, 3), dtype=np.uint8)
    pixels[2:6, 2:6] = (200, 30, 30)
    return EncodedImage.from_array(pixels, "test frame")


def test_questions_and_the_image_go_in_one_request(replay_server: ReplayVisionServer) -> None:
    questioner = OpenAIVisionQuestioner(_settings(replay_server.url))
    image = _frame()
    answers = questioner.ask(
        ["Is the robot holding the cup?", "Is the faucet on?", "Is the cup clean?"], image
    )
    assert answers == [Answer.YES, Answer.NO, Answer.SKIP]
    assert questioner.name == "replay-vlm"  # asked from /v1/models
    (request,) = replay_server.requests
    user = request["messages"][-1]
    text_part, image_part = user["content"]
    assert text_part["type"] == "text"
    assert (
        "1. Is the robot holding the cup?\n2. Is the faucet on?\n3. Is the cup clean?"
        in (text_part["text"])
    )
    assert image_part["type"] == "image_url"
    prefix = "data:image/png;base64,"
    url = image_part["image_url"]["url"]
    assert url.startswith(prefix)
    assert base64.b64decode(url[len(prefix) :]) == image.data
    assert request["temperature"] == 0.0
    assert questioner.usage.calls == 1 and questioner.usage.prompt_tokens == 861


def test_a_one_question_reply_without_a_number_is_read(replay_server) -> None:
    replay_server.queue.pop(0)
    questioner = OpenAIVisionQuestioner(_settings(replay_server.url))
    assert questioner.ask(["Is the cup upright?"], _frame()) == [Answer.NO]


def test_a_server_that_refuses_images_is_a_clear_error() -> None:
    server = ReplayVisionServer(recorded_replies(), status=400)
    try:
        questioner = OpenAIVisionQuestioner(_settings(server.url))
        with pytest.raises(CowpError, match="HTTP 400"):
            questioner.ask(["Is the cup upright?"], _frame())
    finally:
        server.close()


def test_no_server_configured_says_how_to_name_one() -> None:
    with pytest.raises(CowpError, match="vision-language model server"):
        OpenAIVisionQuestioner(LLMSettings(base_url=None))


@pytest.mark.parametrize(
    ("text", "count", "expected"),
    [
        ("1. yes\n2. no", 2, [Answer.YES, Answer.NO]),
        ("2) No\n1: YES.", 2, [Answer.YES, Answer.NO]),
        ("1. maybe\n3. yes", 2, [Answer.SKIP, Answer.SKIP]),  # 3 is out of range
        ("Question 1 - no", 1, [Answer.NO]),
        ("I cannot see the faucet.", 1, [Answer.SKIP]),
        ("1. yes\n1. no", 1, [Answer.YES]),  # the first answer to a question counts
        ("", 3, [Answer.SKIP] * 3),
    ],
)
def test_answer_lines_are_parsed_conservatively(text, count, expected) -> None:
    assert parse_answers(text, count) == expected


def test_images_are_read_from_disk_with_their_type(tmp_path: Path) -> None:
    path = tmp_path / "01_pre.jpg"
    path.write_bytes(b"\xff\xd8 not really a jpeg")
    assert EncodedImage.from_path(path).data_uri().startswith("data:image/jpeg;base64,")
    with pytest.raises(CowpError, match="not an image type"):
        EncodedImage.from_path(tmp_path / "notes.txt")


def test_cowp_run_with_dkprompt_end_to_end(replay_server, tmp_path: Path, capsys) -> None:
    """The CLI, the loop and the client against the replay server.

    find_cup and find_faucet have no preconditions, so the first call is before
    hold_cup, and the first recorded reply says the gripper is not empty: the state
    takes that, and since nothing in fill_cup can empty a hand the run ends with no
    plan. Once the recorded replies are used up the server says yes to everything, and
    the same run completes.
    """
    images = tmp_path / "images"
    images.mkdir()
    frame = _frame()
    for attempt in range(1, 15):
        (images / f"{attempt:02d}.png").write_bytes(frame.data)
    report = tmp_path / "report.json"
    # the recorded replies follow pyperplan's plan, step by step
    code = main(
        ["run", "fill_cup", "--dkprompt", "pre", "--images", str(images),
         "--vlm-url", replay_server.url, "--report", str(report), "--planner", "pyperplan"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 3, out
    assert "Is the robot's gripper empty? -> no (MISMATCH)" in out
    assert "removed fact (hand_free)" in out
    assert "outcome: no_solution" in out
    replay_server.queue.clear()
    # the recorded replies follow pyperplan's plan, step by step
    code = main(
        ["run", "fill_cup", "--dkprompt", "pre", "--images", str(images),
         "--vlm-url", replay_server.url, "--report", str(report), "--planner", "pyperplan"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "DKPROMPT (pre) with replay-vlm" in out
    assert "outcome: completed" in out
    assert replay_server.requests, "the vision server was asked"
    assert all(
        r["messages"][-1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
        for r in replay_server.requests
    )
    assert report.is_file()


def test_dkprompt_flags_are_checked_before_anything_starts(capsys) -> None:
    assert main(["run", "fill_cup", "--dkprompt", "both"]) == 1
    assert "--dkprompt needs --images" in capsys.readouterr().err
    assert main(["run", "fill_cup", "--images", "/tmp"]) == 1
    assert "--images is for --dkprompt" in capsys.readouterr().err
