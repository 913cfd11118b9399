"""What the client does with answers a broken or hostile server sends.

Every field of a reply is checked in one place (`cowp_ros.llm.completion`):
malformed log-probabilities fall back to the answer's text, NaN never becomes a verdict,
a cache entry or a report, oversized answers are refused with a clear error, and the
whole call (every try, every `Retry-After`) ends within `timeout_s`.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.chaos.server import ScriptedLLMServer, completion, json_text
from cowp_ros.cowp.report import CowpReport
from cowp_ros.errors import CowpError
from cowp_ros.llm.answer_cache import AnswerCache
from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.settings import LLMSettings, redact_url


def model_for(url: str, cache: Path | None = None, **settings: Any) -> OpenAICompatibleModel:
    retries = settings.pop("retries", 0)
    config = LLMSettings(base_url=url, model="scripted", cache_path=cache, **settings)
    return OpenAICompatibleModel(config, max_retries=retries)


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"non-strict JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def _with_top(content: str, top_logprobs: Any, *, logprob: Any = -0.1) -> dict[str, Any]:
    body = completion(content)
    body["choices"][0]["logprobs"] = {
        "content": [{"token": content, "logprob": logprob, "top_logprobs": top_logprobs}]
    }
    return body


MALFORMED = {
    "logprob 1000": [{"token": "Yes", "logprob": 1000}, {"token": "No", "logprob": -1}],
    "logprob 1e6": [{"token": "Yes", "logprob": 1e6}],
    "logprob a string": [{"token": "Yes", "logprob": "very likely"}],
    "logprob null": [{"token": "Yes", "logprob": None}],
    "logprob a bool": [{"token": "Yes", "logprob": True}],
    "token a number": [{"token": 7, "logprob": -0.1}],
    "alternatives not a list": 17,
    "alternative not an object": ["Yes"],
    "alternative without a token": [{"logprob": -0.2}],
}


@pytest.mark.parametrize("top", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_logprobs_fall_back_to_the_text(scripted: ScriptedLLMServer, top: Any) -> None:
    scripted.reply(_with_top("Yes", top))
    verdict = model_for(scripted.url).ask_yes_no("Is water wet?")
    assert verdict.answer is True  # read from the text "Yes"
    assert verdict.p_yes is None


def test_dict_shaped_top_logprobs_are_read(scripted: ScriptedLLMServer) -> None:
    """The legacy completions shape {token: logprob} is a shape, not garbage."""
    scripted.reply(_with_top("No", {"No": math.log(0.75), "Yes": math.log(0.25)}))
    verdict = model_for(scripted.url).ask_yes_no("q")
    assert verdict.answer is False and verdict.p_yes == pytest.approx(0.25)


def test_the_first_token_alone_serves_when_there_are_no_alternatives(
    scripted: ScriptedLLMServer,
) -> None:
    scripted.reply(_with_top("Yes", [], logprob=math.log(0.9)))
    verdict = model_for(scripted.url).ask_yes_no("q")
    assert verdict.answer is True and verdict.p_yes == pytest.approx(1.0)


def test_minus_infinity_is_a_probability_of_zero(scripted: ScriptedLLMServer) -> None:
    top = [{"token": "No", "logprob": -0.01}, {"token": "Yes", "logprob": -math.inf}]
    scripted.reply(json_text(_with_top("No", top)))
    verdict = model_for(scripted.url).ask_yes_no("q")
    assert verdict.answer is False and verdict.p_yes == 0.0


def test_nan_never_flips_a_verdict_nor_reaches_the_cache(
    scripted: ScriptedLLMServer, tmp_path: Path
) -> None:
    cache = tmp_path / "answers.sqlite3"
    top = [{"token": "Yes", "logprob": math.nan}, {"token": "No", "logprob": math.nan}]
    scripted.reply(json_text(_with_top("Yes", top, logprob=math.nan)))
    verdict = model_for(scripted.url, cache).ask_yes_no("Is water wet?")
    assert verdict.answer is True and verdict.p_yes is None
    with sqlite3.connect(cache) as db:
        stored = [row[0] for row in db.execute("SELECT answer FROM answers")]
    assert stored and all(strict_json(answer)["p_yes"] is None for answer in stored)


def test_a_poisoned_cache_entry_is_asked_again(scripted: ScriptedLLMServer, tmp_path: Path) -> None:
    """An answer cached with NaN (by an older client) is not served."""
    cache_path = tmp_path / "answers.sqlite3"
    model = model_for(scripted.url, cache_path)
    scripted.reply(completion("Yes", [("Yes", -0.1), ("No", -2.4)]))
    model.ask_yes_no("q")
    with sqlite3.connect(cache_path) as db:
        db.execute(
            "UPDATE answers SET answer = ?",
            (json_text({"answer": False, "p_yes": math.nan, "text": "x"}),),
        )
    scripted.reply(completion("Yes", [("Yes", -0.1), ("No", -2.4)]))
    again = model_for(scripted.url, cache_path).ask_yes_no("q")
    assert not again.cached and again.answer is True
    assert len(scripted.chat_requests) == 2


def test_p_yes_is_finite_and_within_0_and_1_for_absurd_but_valid_numbers(
    scripted: ScriptedLLMServer,
) -> None:
    scripted.reply(
        _with_top("Yes", [{"token": "Yes", "logprob": -1e308}, {"token": "No", "logprob": -1e308}])
    )
    verdict = model_for(scripted.url).ask_yes_no("q")
    assert verdict.p_yes is None or (math.isfinite(verdict.p_yes) and 0 <= verdict.p_yes <= 1)
    assert verdict.answer is True


def test_a_report_is_strict_json_even_with_nan_in_an_event() -> None:
    report = CowpReport(task="t", description="d", planner="p", model="m")
    report.add("monitor", "asked", p_yes=math.nan, score=math.inf)
    data = strict_json(report.to_json())
    assert data["events"][0]["p_yes"] is None and data["events"][0]["score"] is None


# --- sizes ---------------------------------------------------------------------------


def test_a_huge_answer_is_refused_with_a_clear_error(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("Yes " * 2_500_000))  # 10 MB for a one-token question
    with pytest.raises(CowpError, match=r"too large|characters") as caught:
        model_for(scripted.url).ask_yes_no("q")
    assert len(str(caught.value)) < 1000


def test_a_long_answer_to_a_short_question_is_refused(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("word " * 4000))  # 20 kB for at most 16 tokens
    with pytest.raises(CowpError, match="characters"):
        model_for(scripted.url).complete("q", max_tokens=16)


def test_control_characters_never_reach_the_caller(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("\x1b[2J\x1b[31mYes\x1b[0m\x07"))
    verdict = model_for(scripted.url).ask_yes_no("q")
    assert verdict.answer is True
    assert not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in verdict.text)


def test_content_that_is_not_text_is_a_clear_error(scripted: ScriptedLLMServer) -> None:
    body = completion("Yes")
    body["choices"][0]["message"]["content"] = {"nested": ["Yes"]}
    scripted.reply(body)
    with pytest.raises(CowpError, match="not a usable chat completion"):
        model_for(scripted.url).ask_yes_no("q")


@pytest.mark.parametrize(
    "body",
    [b"\xff\xfe not utf-8", b"", b"[1, 2]", b'{"choices": "many"}', b'{"choices": [7]}'],
    ids=["not utf-8", "empty", "a list", "choices a string", "choice a number"],
)
def test_bodies_that_are_not_completions(scripted: ScriptedLLMServer, body: bytes) -> None:
    scripted.reply(body)
    with pytest.raises(CowpError, match="not a usable chat completion"):
        model_for(scripted.url).ask_yes_no("q")


# --- the deadline of a whole call ----------------------------------------------------


def test_retry_after_beyond_the_timeout_ends_the_call_at_once(scripted: ScriptedLLMServer) -> None:
    scripted.reply(
        {"error": {"message": "slow down"}}, status=429, headers=(("Retry-After", "120"),)
    )
    model = model_for(scripted.url, timeout_s=3.0, retries=2)
    started = time.monotonic()
    with pytest.raises(CowpError, match=r"Retry-After|retry after"):
        model.ask_yes_no("q")
    assert time.monotonic() - started < 3.0


def test_retry_after_within_the_timeout_is_honoured(scripted: ScriptedLLMServer) -> None:
    scripted.reply(
        {"error": {"message": "slow down"}}, status=429, headers=(("Retry-After", "0.3"),)
    )
    scripted.reply(completion("Yes", [("Yes", -0.1), ("No", -2.4)]))
    model = model_for(scripted.url, timeout_s=5.0, retries=1)
    started = time.monotonic()
    assert model.ask_yes_no("q").answer is True
    assert time.monotonic() - started >= 0.3 and len(scripted.chat_requests) == 2


def test_the_timeout_bounds_all_tries_together(scripted: ScriptedLLMServer) -> None:
    scripted.reply(hang=True)
    scripted.reply(hang=True)
    model = model_for(scripted.url, timeout_s=1.0, retries=1)
    started = time.monotonic()
    with pytest.raises(CowpError, match="did not answer within 1 s"):
        model.ask_yes_no("q")
    assert time.monotonic() - started < 1.6


def test_a_dripping_answer_is_cut_at_the_deadline(scripted: ScriptedLLMServer) -> None:
    scripted.reply(completion("Yes"), drip_s=0.2)  # ~300 bytes, 64 every 0.2 s: ~1 s
    model = model_for(scripted.url, timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(CowpError, match="did not answer within"):
        model.ask_yes_no("q")
    assert time.monotonic() - started < 1.0


# --- which server answered -----------------------------------------------------------


def test_the_cache_tells_servers_apart(tmp_path: Path) -> None:
    """Two servers that both call their model "scripted" do not share answers."""
    cache = tmp_path / "answers.sqlite3"
    with ScriptedLLMServer() as one, ScriptedLLMServer() as other:
        one.reply(completion("Yes", [("Yes", -0.1), ("No", -3.0)]))
        other.reply(completion("No", [("No", -0.1), ("Yes", -3.0)]))
        assert model_for(one.url, cache).ask_yes_no("q").answer is True
        verdict = model_for(other.url, cache).ask_yes_no("q")
        assert (verdict.answer, verdict.cached) == (False, False)


def test_a_cache_scope_keeps_answers_across_ports(tmp_path: Path) -> None:
    """The embedded server gets a new port every start; its answers stay cached."""
    cache = tmp_path / "answers.sqlite3"
    with ScriptedLLMServer() as first, ScriptedLLMServer() as second:
        first.reply(completion("Yes", [("Yes", -0.1), ("No", -3.0)]))
        scope = "embedded:test-model:0123"
        assert model_for(first.url, cache, cache_scope=scope).ask_yes_no("q").answer is True
        again = model_for(second.url, cache, cache_scope=scope).ask_yes_no("q")
        assert again.cached and not second.chat_requests


def test_cache_records_stay_readable_by_model(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "a.sqlite3")
    cache.put("scope-a", "yes_no", {"q": 1}, {"answer": True}, model="m")
    assert cache.get("scope-a", "yes_no", {"q": 1}) == {"answer": True}
    assert cache.get("scope-b", "yes_no", {"q": 1}) is None
    assert cache.clear("m") == 1


# --- secrets -------------------------------------------------------------------------

SECRET = "sk-chaos-5e3fd1c2"


def test_a_key_in_the_url_is_never_shown(scripted: ScriptedLLMServer) -> None:
    url = scripted.url.replace("http://", f"http://robot:{SECRET}@")
    scripted.reply({"error": {"message": "bad key"}}, status=401)
    with pytest.raises(CowpError) as caught:
        model_for(url).ask_yes_no("q")
    assert SECRET not in str(caught.value) and "robot:***@" in str(caught.value)
    scripted.close()
    with pytest.raises(CowpError) as unreachable:
        model_for(url).ask_yes_no("q")
    assert SECRET not in str(unreachable.value)


def test_the_401_hint_names_the_flag_every_command_has(scripted: ScriptedLLMServer) -> None:
    scripted.reply({"error": {"message": "bad key"}}, status=401)
    with pytest.raises(CowpError, match="--llm-key"):
        model_for(scripted.url).ask_yes_no("q")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://robot:{SECRET}@host:8000/v1", "http://robot:***@host:8000/v1"),
        (f"https://{SECRET}@host/v1", "https://***@host/v1"),
        (f"http://host/v1?api_key={SECRET}&x=1", "http://host/v1?api_key=***&x=1"),
        (f"robot:{SECRET}@host/v1", "***@host/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert SECRET not in LLMSettings(base_url=url).shown_url


# --- plain-text continuation (/completions) ------------------------------------------


def _text_completion(text: Any) -> dict[str, Any]:
    return {
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
    }


def test_a_continuation_is_asked_raw_with_its_stops_and_cached(
    scripted: ScriptedLLMServer, tmp_path: Path
) -> None:
    scripted.reply(_text_completion("    find_cup('cup_1')\n"))
    model = model_for(scripted.url, cache=tmp_path / "answers.sqlite3")
    first = model.continue_text("def fill():\n", max_tokens=32, stop=["\ndef "])
    again = model.continue_text("def fill():\n", max_tokens=32, stop=["\ndef "])
    assert first == again == "    find_cup('cup_1')\n"  # indentation and lines are kept
    (request,) = scripted.requests
    assert request.path.endswith("/completions") and not request.is_chat
    assert request.json["prompt"] == "def fill():\n" and request.json["stop"] == ["\ndef "]
    assert model.usage.calls == 1 and model.usage.completion_tokens == 3


@pytest.mark.parametrize(
    "body",
    [_text_completion({"code": 1}), _text_completion("word " * 4000), {"choices": []}],
    ids=["text not a string", "too long", "no choices"],
)
def test_a_continuation_that_is_not_text_is_a_clear_error(
    scripted: ScriptedLLMServer, body: Any
) -> None:
    scripted.reply(body)
    with pytest.raises(CowpError, match="not a usable"):
        model_for(scripted.url).continue_text("q", max_tokens=16)
