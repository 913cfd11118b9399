"""OpenAICompatibleModel against a scripted server: parsing, cache, usage, errors."""

from __future__ import annotations

import math
import socket
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.llm.client import SYSTEM_PROMPT, OpenAICompatibleModel
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.llm.settings import LLMSettings, Sampling

YES_TOP = [("Yes", math.log(0.6)), ("No", math.log(0.2)), (" yes", math.log(0.1))]


def model_for(url: str, tmp_path: Path | None, **settings: Any) -> OpenAICompatibleModel:
    cache = tmp_path / "answers.sqlite3" if tmp_path else None
    config = LLMSettings(base_url=url, model="scripted", cache_path=cache, **settings)
    return OpenAICompatibleModel(config, max_retries=0)


def test_it_is_a_language_model(scripted: Any, tmp_path: Path) -> None:
    assert isinstance(model_for(scripted.url, tmp_path), LanguageModel)


def test_yes_no_from_first_token_logprobs(scripted: Any, make_completion: Any) -> None:
    scripted.reply(make_completion("Yes", YES_TOP, prompt_tokens=30, cached_tokens=25))
    model = model_for(scripted.url, None)
    verdict = model.ask_yes_no("Is water wet?", examples=[Example("Is fire hot?", "Yes")])
    assert verdict.answer is True
    assert verdict.p_yes == pytest.approx(0.7 / 0.9)
    request = scripted.chat_requests[0].json
    assert request["max_tokens"] == 1 and request["logprobs"] is True
    assert request["temperature"] == 0
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert request["messages"][0]["content"] == SYSTEM_PROMPT  # the shared prefix
    assert model.usage.calls == 1 and model.usage.prompt_tokens == 30
    assert model.prefix_cached_tokens == 25


def test_p_yes_decides_even_when_the_sampled_token_disagrees(
    scripted: Any, make_completion: Any
) -> None:
    scripted.reply(make_completion("Yes", [("Yes", math.log(0.4)), ("No", math.log(0.5))]))
    verdict = model_for(scripted.url, None).ask_yes_no("q")
    assert verdict.answer is False and verdict.p_yes is not None and verdict.p_yes < 0.5


def test_text_fallback_without_logprobs(scripted: Any, make_completion: Any) -> None:
    scripted.reply(make_completion("No"))  # a server that ignores logprobs
    verdict = model_for(scripted.url, None).ask_yes_no("q")
    assert (verdict.answer, verdict.p_yes) == (False, None)


def test_follow_up_when_the_first_token_is_neither(scripted: Any, make_completion: Any) -> None:
    scripted.reply(make_completion("The", [("The", -0.1), ("It", -2.0)]))
    scripted.reply(make_completion("The answer is no."))
    model = model_for(scripted.url, None)
    verdict = model.ask_yes_no("q")
    assert verdict.answer is False and verdict.text == "The answer is no."
    assert model.usage.calls == 2 and scripted.chat_requests[1].json["max_tokens"] > 1


def test_undecided_answer_is_none_not_an_error(scripted: Any, make_completion: Any) -> None:
    scripted.reply(make_completion("Hmm", [("Hmm", -0.1)]))
    scripted.reply(make_completion("Hard to say."))
    assert model_for(scripted.url, None).ask_yes_no("q").answer is None


def test_second_ask_is_a_cache_hit_with_no_call(
    scripted: Any, make_completion: Any, tmp_path: Path
) -> None:
    scripted.reply(make_completion("Yes", YES_TOP))
    model = model_for(scripted.url, tmp_path)
    first = model.ask_yes_no("Is water wet?")
    again = model.ask_yes_no("Is water wet?")
    assert not first.cached and again.cached
    assert (again.answer, again.p_yes) == (first.answer, first.p_yes)
    assert len(scripted.chat_requests) == 1
    assert model.usage.calls == 1 and model.usage.cache_hits == 1
    # a new process (new client, same file) reuses it too
    other = model_for(scripted.url, tmp_path)
    assert other.ask_yes_no("Is water wet?").cached and len(scripted.chat_requests) == 1


def test_a_different_system_prompt_is_a_different_question(
    scripted: Any, make_completion: Any, tmp_path: Path
) -> None:
    scripted.reply(make_completion("Yes", YES_TOP))
    scripted.reply(make_completion("No", [("No", -0.1)]))
    model = model_for(scripted.url, tmp_path)
    assert model.ask_yes_no("q").answer is True
    assert model.ask_yes_no("q", system="Be strict.").answer is False
    assert len(scripted.chat_requests) == 2


def test_choice_and_complete(scripted: Any, make_completion: Any, tmp_path: Path) -> None:
    scripted.reply(make_completion("A mug."))
    scripted.reply(make_completion("(holding cup robot)"))
    model = model_for(scripted.url, tmp_path)
    choice = model.ask_choice("Which? fork, mug", ["fork", "mug"])
    assert (choice.index, choice.option) == (1, "mug")
    assert model.complete("predicate?") == "(holding cup robot)"
    assert model.ask_choice("Which? fork, mug", ["fork", "mug"]).cached


def test_batch_reads_numbered_lines(scripted: Any, make_completion: Any) -> None:
    scripted.reply(make_completion("1. Yes\n2. No\n"))
    verdicts = model_for(scripted.url, None).ask_batch(["a?", "b?", "c?"])
    assert [v.answer for v in verdicts] == [True, False, None]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_server_names_the_url_and_the_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = model_for(url, tmp_path)
    with pytest.raises(CowpError, match="cannot reach the LLM server") as caught:
        model.ask_yes_no("q")
    assert url in str(caught.value) and "cowp llm serve" in str(caught.value)


def test_timeout_is_reported_with_the_limit(scripted: Any, make_completion: Any) -> None:
    scripted.reply(make_completion("Yes", YES_TOP), delay=3.0)
    model = model_for(scripted.url, None, timeout_s=0.5)
    with pytest.raises(CowpError, match=r"did not answer within 0?\.?5? ?s|did not answer within"):
        model.ask_yes_no("q")


@pytest.mark.parametrize(
    "body", [b"<html>not json</html>", {"choices": []}, {"object": "chat.completion"}]
)
def test_garbage_reply_is_a_cowp_error(scripted: Any, body: Any) -> None:
    scripted.reply(body)
    with pytest.raises(CowpError, match="not a usable chat completion") as caught:
        model_for(scripted.url, None).ask_yes_no("q")
    assert scripted.url.rstrip("/") in str(caught.value)


def test_http_errors_say_what_to_do(scripted: Any) -> None:
    scripted.reply({"error": {"message": "model 'scripted' not found"}}, status=404)
    with pytest.raises(CowpError, match="OPENAI_MODEL"):
        model_for(scripted.url, None).ask_yes_no("q")
    scripted.reply({"error": {"message": "overloaded"}}, status=503)
    with pytest.raises(CowpError, match="HTTP 503"):
        model_for(scripted.url, None).ask_yes_no("q")


def test_unconfigured_settings_are_refused() -> None:
    with pytest.raises(CowpError, match="no LLM server is configured"):
        OpenAICompatibleModel(LLMSettings(cache_path=None))


def test_sampled_answers_send_their_temperature_and_seed_and_are_cached_apart(
    scripted: Any, make_completion: Any, tmp_path: Path
) -> None:
    model = model_for(scripted.url, tmp_path)
    scripted.reply(make_completion("greedy"))
    assert model.complete("Name a fruit.") == "greedy"
    assert scripted.chat_requests[-1].json["temperature"] == 0
    assert "seed" not in scripted.chat_requests[-1].json
    model.set_sampling(Sampling(0.8, 7))
    scripted.reply(make_completion("banana"))
    # the greedy answer is never served for a sampled question
    assert model.complete("Name a fruit.") == "banana"
    request = scripted.chat_requests[-1].json
    assert (request["temperature"], request["seed"]) == (0.8, 7)
    assert model.complete("Name a fruit.") == "banana"  # the same sample, cached
    model.set_sampling(Sampling(0.8, 8))
    scripted.reply(make_completion("cherry"))
    assert model.complete("Name a fruit.") == "cherry"  # another seed, another sample
    model.set_sampling(None)
    assert model.complete("Name a fruit.") == "greedy"
    assert len(scripted.chat_requests) == 3
    scripted.reply({"choices": [{"index": 0, "text": " walk", "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1}})  # fmt: skip
    model.set_sampling(Sampling(1.0, 3))
    model.continue_text("Step 1:", max_tokens=4)
    (plain,) = [
        r.json
        for r in scripted.requests
        if r.path.endswith("/completions") and "prompt" in (r.json or {})
    ]
    assert (plain["temperature"], plain["seed"]) == (1.0, 3)


def test_a_sampled_verdict_is_the_token_the_server_drew(
    scripted: Any, make_completion: Any
) -> None:
    # P(yes) = 0.6 / (0.6 + 0.3): the greedy verdict is yes; the server drew "No"
    top = [("No", math.log(0.3)), ("Yes", math.log(0.6))]
    scripted.reply(make_completion("No", top))
    model = model_for(scripted.url, None)
    model.set_sampling(Sampling(0.7, 1))
    verdict = model.ask_yes_no("Is the cup clean?")
    assert verdict.answer is False and verdict.p_yes == pytest.approx(2 / 3)
    assert scripted.chat_requests[-1].json["seed"] == 1


@pytest.mark.parametrize("temperature", [0.0, -0.5, 3.0, float("nan")])
def test_a_sampling_temperature_out_of_range_is_refused(temperature: float) -> None:
    with pytest.raises(CowpError, match="temperature"):
        Sampling(temperature, 0)


def test_warm_sends_the_questions_prefix_and_answers_nothing(
    scripted: Any, make_completion: Any, tmp_path: Path
) -> None:
    examples = [Example("Is fire hot?", "Yes"), Example("Is ice hot?", "No")]
    scripted.reply(make_completion("Yes"))
    scripted.reply(make_completion("Yes", YES_TOP))
    model = model_for(scripted.url, tmp_path)
    assert model.warm(examples=examples) >= 0.0
    model.ask_yes_no("Is water wet?", examples=examples)
    warmed, asked = (r.json["messages"] for r in scripted.chat_requests)
    assert warmed[:-1] == asked[:-1]  # the same prefix, up to the last question
    assert warmed[-1]["content"] != asked[-1]["content"]
    assert model.usage.calls == 1 and model.warm_seconds > 0.0  # warming is no question
    assert scripted.chat_requests[0].json["max_tokens"] == 1


def test_warm_against_a_failing_server_costs_nothing_but_time(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    model = model_for(f"http://127.0.0.1:{port}/v1", tmp_path, timeout_s=2.0)
    assert model.warm(examples=[Example("Is fire hot?", "Yes")]) == 0.0
