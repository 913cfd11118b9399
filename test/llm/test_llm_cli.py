"""`cowp llm ask` and `cowp llm eval` against a scripted server (no model needed)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.cli import main

SERVER_FLAGS = ["--llm-model", "scripted", "--no-cache"]


def test_ask_prints_answer_p_yes_and_latency(
    scripted: Any, make_completion: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted.reply(make_completion("No", [("No", math.log(0.75)), ("Yes", math.log(0.25))]))
    code = main(["llm", "ask", "Dirty cup?", "--llm-url", scripted.url, *SERVER_FLAGS])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "no"
    assert "P(yes) = 0.250" in out and "latency:" in out


def test_ask_with_options_picks_one(
    scripted: Any, make_completion: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted.reply(make_completion("mug"))
    args = ["llm", "ask", "Which?", "--options", "fork, mug", "--llm-url", scripted.url]
    assert main([*args, *SERVER_FLAGS]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "mug"


def test_ask_against_an_unreachable_server_is_a_clean_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["llm", "ask", "q", "--llm-url", "http://127.0.0.1:9/v1", *SERVER_FLAGS])
    assert code == 1
    err = capsys.readouterr().err
    assert "cannot reach the LLM server at http://127.0.0.1:9/v1" in err
    assert "Traceback" not in err


def test_eval_reports_accuracy_and_latency(
    scripted: Any, make_completion: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkset = tmp_path / "checkset.yaml"
    checkset.write_text(
        "monitor:\n"
        "  - {q: 'Fill a cup, if the cup is dirty?', expect: no}\n"
        "  - {q: 'Fill a cup, if the cup is blue?', expect: yes}\n"
        "selection:\n"
        "  - {q: 'Which: fork, mug?', options: [fork, mug], expect: mug}\n"
    )
    scripted.reply(make_completion("No", [("No", -0.1), ("Yes", -2.5)]))
    scripted.reply(make_completion("No", [("No", -0.1), ("Yes", -2.5)]))  # a false alarm
    scripted.reply(make_completion("mug"))
    flags = ["--checkset", str(checkset), "--no-gpt3", "--json", str(tmp_path / "out.json")]
    code = main(["llm", "eval", *flags, "--llm-url", scripted.url, "--llm-model", "scripted"])
    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"monitor\s+1/2 ", out)
    assert "caught 1/1 blocking situations, false alarms on 1/1 benign ones" in out
    assert re.search(r"selection\s+1/1 ", out)
    assert "latency per answer: median" in out
    assert (tmp_path / "out.json").is_file()
