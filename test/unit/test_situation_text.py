"""Situation text from outside (a person, a detector, a topic) is checked where it enters.

A 10 MB situation made a 140 MB report; ANSI escapes in one were printed raw; a situation
that was not UTF-8 reached the language model's request and the failure was blamed on
the server. `OpenWorldPlanner.observe` now takes clean text of a bounded size only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowp_ros.cli import main
from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.registry import build_loop
from cowp_ros.safe_text import MAX_SITUATION_CHARS, situation_text
from cowp_ros.tasks import get_task


def _loop() -> OpenWorldPlanner:
    loop = build_loop("cowp", get_task("fill_cup"), ScriptedModel())
    loop.plan()
    return loop


def test_a_huge_situation_is_refused_with_a_clear_error() -> None:
    loop = _loop()
    with pytest.raises(CowpError, match=f"at most {MAX_SITUATION_CHARS}"):
        loop.observe("the cup is dirty " * 600_000)
    assert not loop.situations  # nothing half-recorded


def test_escape_sequences_never_reach_the_report_or_the_model() -> None:
    model = ScriptedModel()
    loop = build_loop("cowp", get_task("fill_cup"), model)
    loop.plan()
    loop.observe("\x1b[2J\x1b]0;owned\x07the cup is \x1b[31mdirty\x1b[0m\x00")
    (known,) = loop.situations
    assert known.text == "the cup is dirty"
    assert all("\x1b" not in question for _, question, _ in model.log)
    assert "\x1b" not in json.dumps([e.to_dict() for e in loop.report.events])


def test_text_that_was_not_utf8_is_kept_readable_not_blamed_on_anyone() -> None:
    raw = b"the cup is \xffdirty".decode("utf-8", errors="surrogateescape")
    loop = _loop()
    loop.observe(raw)
    (known,) = loop.situations
    assert known.text == "the cup is \ufffddirty"
    known.text.encode("utf-8")  # every encoder downstream takes it


@pytest.mark.parametrize("text", ["", "   ", "\x1b[0m", "\x00\x07"])
def test_a_situation_with_nothing_to_say_is_refused(text: str) -> None:
    with pytest.raises(CowpError, match="empty"):
        situation_text(text)


def test_cowp_run_refuses_a_huge_situation_before_any_model_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    code = main(["run", "fill_cup", "--situation", "x" * 5000, "--report", str(report)])
    err = capsys.readouterr().err
    assert code == 1 and "situation" in err and "Traceback" not in err
    assert len(err) < 2000
    data = json.loads(report.read_text())  # the report says why nothing ran
    assert data["outcome"] == "error" and "too long" in data["error"]["message"]
