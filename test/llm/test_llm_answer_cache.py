"""The persistent answer cache: exact keys, persistence, and several writers at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from cowp_ros.llm.answer_cache import AnswerCache, cache_key

PROMPT = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]}


def test_key_covers_model_kind_and_every_part_of_the_prompt() -> None:
    base = cache_key("m", "yes_no", PROMPT)
    assert base == cache_key("m", "yes_no", dict(PROMPT))
    assert base != cache_key("other", "yes_no", PROMPT)
    assert base != cache_key("m", "choice", PROMPT)
    other_system = {"messages": [{"role": "system", "content": "t"}, PROMPT["messages"][1]]}
    assert base != cache_key("m", "yes_no", other_system)
    assert base != cache_key("m", "yes_no", {**PROMPT, "options": ["a"]})


def test_answers_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "answers.sqlite3"
    cache = AnswerCache(path)
    assert cache.get("m", "yes_no", PROMPT) is None
    cache.put("m", "yes_no", PROMPT, {"answer": True, "p_yes": 0.9, "text": "Yes"})
    cache.close()
    reopened = AnswerCache(path)
    assert reopened.get("m", "yes_no", PROMPT) == {"answer": True, "p_yes": 0.9, "text": "Yes"}
    assert reopened.get("m2", "yes_no", PROMPT) is None
    assert len(reopened) == 1
    assert reopened.clear("m") == 1 and len(reopened) == 0


def _writer(path: str, worker: int) -> None:
    cache = AnswerCache(Path(path))
    for i in range(50):
        prompt = {"q": f"{worker}-{i}"}
        cache.put("m", "complete", prompt, {"text": f"{worker}-{i}"})
        assert cache.get("m", "complete", {"q": f"{worker}-{i // 2}"}) is not None
    cache.close()


def test_concurrent_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    AnswerCache(path).close()  # create the schema once, as a first user would
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), n)) for n in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    assert len(AnswerCache(path)) == 200
