"""The command line under faults: a report on every outcome, one set of LLM flags, bad
values refused by argparse, a broken task registry that breaks nothing else."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.chaos.server import ScriptedLLMServer, completion
from cowp_ros.cli import main
from cowp_ros.cli import run as run_cli
from cowp_ros.llm.scripted import ScriptedModel

SECRET = "sk-chaos-0badc0de"


def strict(path: Path) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    return json.loads(path.read_text(), parse_constant=refuse)


def reports_in(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


# --- a report on every outcome -------------------------------------------------------


def test_a_transport_fault_still_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    with ScriptedLLMServer() as server:
        server.reply(completion("Yes"))  # the run reads its prompt prefix ahead
        server.reply({"error": {"message": "overloaded"}}, status=503)
        server.reply({"error": {"message": "overloaded"}}, status=503)  # the retry
        code = main(
            ["run", "fill_cup", "--situation", "the cup is dirty", "--llm-url", server.url,
             "--llm-model", "m", "--llm-timeout", "5", "--no-cache", "--report", str(report)]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "HTTP 503" in err and "Traceback" not in err
    data = strict(report)
    assert data["outcome"] == "error" and "HTTP 503" in data["error"]["message"]
    assert data["task"] == "fill_cup"
    assert any(event["kind"] == "plan" for event in data["events"])  # the work so far
    assert f"report: {report}" in err


def test_without_report_flag_the_report_goes_to_build_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COWP_REPORTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    code = main(
        ["run", "fill_cup", "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m",
         "--situation", "the cup is dirty", "--quiet"]
    )  # fmt: skip
    assert code == 1
    (written,) = reports_in(tmp_path / "build" / "reports")
    assert written.name.startswith("fill_cup-")
    assert strict(written)["outcome"] == "error"
    assert f"report: {tmp_path / 'build' / 'reports' / written.name}" in capsys.readouterr().err


def test_an_interrupted_run_writes_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Interrupting(ScriptedModel):
        """Ctrl-C while the model answers the first question about the situation."""

        def ask_yes_no(self, question: str, **kwargs: Any) -> Any:
            if "The cup is dirty" in question:
                raise KeyboardInterrupt
            return super().ask_yes_no(question, **kwargs)

    @contextlib.contextmanager
    def open_model(args: Any) -> Iterator[ScriptedModel]:
        yield Interrupting()

    monkeypatch.setattr(run_cli, "open_model", open_model)
    report = tmp_path / "r.json"
    code = main(["run", "fill_cup", "--situation", "the cup is dirty", "--report", str(report)])
    assert code == 130
    data = strict(report)
    assert data["outcome"] == "interrupted"
    kinds = [e["kind"] for e in data["events"]]
    assert kinds[0] == "plan" and kinds[-1] == "situation"


def test_a_successful_run_says_where_its_default_report_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COWP_REPORTS_DIR", str(tmp_path / "reports"))

    @contextlib.contextmanager
    def open_model(args: Any) -> Iterator[ScriptedModel]:
        yield ScriptedModel()

    monkeypatch.setattr(run_cli, "open_model", open_model)
    assert main(["run", "fill_cup"]) == 0
    (written,) = reports_in(tmp_path / "reports")
    assert strict(written)["outcome"] == "completed"
    assert f"report: {written}" in capsys.readouterr().out


# --- one set of LLM flags --------------------------------------------------------------


def test_run_takes_the_llm_flags_every_command_takes(tmp_path: Path) -> None:
    """The 401 hint names --llm-key: `cowp run` must accept it (and --no-cache)."""
    report = tmp_path / "r.json"
    with ScriptedLLMServer() as server:
        server.reply(completion("Yes"))  # the run reads its prompt prefix ahead
        server.reply({"error": {"message": "who are you"}}, status=401)
        code = main(
            ["run", "fill_cup", "--situation", "the cup is dirty", "--llm-url", server.url,
             "--llm-model", "m", "--llm-key", SECRET, "--no-cache", "--report", str(report)]
        )  # fmt: skip
        assert server.chat_requests[0].headers["Authorization"] == f"Bearer {SECRET}"
    assert code == 1 and "--llm-key" in strict(report)["error"]["hint"]


def test_the_old_run_key_flag_still_works(tmp_path: Path) -> None:
    with ScriptedLLMServer() as server:
        server.reply(completion("Yes", [("Yes", -0.1), ("No", -3.0)]))
        main(
            ["run", "fill_cup", "--llm-url", server.url, "--llm-model", "m",
             "--llm-api-key", SECRET, "--no-cache", "--report", str(tmp_path / "r.json")]
        )  # fmt: skip
        assert all(r.headers["Authorization"] == f"Bearer {SECRET}" for r in server.chat_requests)


def test_a_key_in_the_url_is_in_no_output_and_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    with ScriptedLLMServer() as server:
        url = server.url.replace("http://", f"http://robot:{SECRET}@")
        server.reply(b"<html>oops</html>", status=502)
        main(
            ["run", "fill_cup", "--situation", "the cup is dirty", "--llm-url", url,
             "--llm-model", "m", "--no-cache", "--report", str(report)]
        )  # fmt: skip
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err + report.read_text()
    assert "robot:***@" in captured.err


# --- values argparse refuses -----------------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        ["plan", "fill_cup", "--timeout", "inf"],
        ["plan", "fill_cup", "--timeout", "nan"],
        ["plan", "fill_cup", "--timeout", "-1"],
        ["plan", "fill_cup", "--timeout", "0"],
        ["plan", "fill_cup", "--timeout", "1e12"],
        ["run", "fill_cup", "--llm-timeout", "inf"],
        ["run", "fill_cup", "--llm-timeout", "nan"],
        ["llm", "ask", "q", "--llm-timeout", "-3"],
    ],
)
def test_seconds_must_be_a_positive_finite_number(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(flags)
    assert exit_.value.code == 2
    assert "seconds" in capsys.readouterr().err


def test_planner_timeout_is_honoured(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    assert main(["plan", "fill_cup", "--timeout", "30"]) == 0
    assert time.monotonic() - started < 30


# --- a broken task registry ------------------------------------------------------------

BROKEN_REGISTRIES = {
    "yaml syntax": b"fill_cup: [unclosed\n",
    "a list": b"- fill_cup\n- set_table\n",
    "an entry without domain": b"fill_cup:\n  description: x\n  problem: p.pddl\n"
    b"  task_objects: [cup_1]\n",
    "task_objects a number": b"fill_cup:\n  description: x\n  domain: d.pddl\n"
    b"  problem: p.pddl\n  task_objects: 7\n",
    "not utf-8": b"fill_cup:\n  description: \xff\xfe\n",
    "a bad task name": b"'(evil)':\n  description: x\n  domain: d\n  problem: p\n"
    b"  task_objects: []\n",
}


@pytest.mark.parametrize("text", BROKEN_REGISTRIES.values(), ids=BROKEN_REGISTRIES.keys())
def test_a_broken_registry_breaks_no_other_command(
    text: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "tasks.yaml").write_bytes(text)
    monkeypatch.setenv("COWP_PDDL_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert "cowp_ros" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    assert "task registry" in capsys.readouterr().out
    assert main(["plan", "fill_cup"]) == 1
    err = capsys.readouterr().err
    assert "tasks.yaml" in err and "Traceback" not in err
    from cowp_ros.tasks import describe_tasks

    assert "task registry" in describe_tasks()


def test_ctrl_c_while_the_commands_load_is_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by `cowp chaos`: SIGINT during start-up (importing every subcommand takes
    seconds on a busy machine) ended in a KeyboardInterrupt traceback."""
    import cowp_ros.cli as cli

    def interrupted(argv: object = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["plan", "fill_cup"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_ctrl_c_while_the_model_answers_ends_within_a_second(tmp_path: Path) -> None:
    """Ctrl-C while the model thinks: the command ends (report written, exit 130) within
    a second. It took 11 s: the embedded server was left to finish its answer, then the
    interpreter tore down every library the subcommands had imported."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    from cowp_ros.chaos.server import Reply
    from cowp_ros.llm.client import WARM_QUESTION

    asked = threading.Event()

    def slow(request: Any) -> Reply:
        if request.json["messages"][-1]["content"] == WARM_QUESTION:
            return Reply(body=completion("Yes"))  # the run reads its prompt prefix ahead
        asked.set()
        return Reply(body=completion("Yes", [("Yes", -0.1)]), delay_s=60.0)

    script = Path(sys.executable).with_name("cowp")
    report = tmp_path / "report.json"
    with ScriptedLLMServer(slow) as server:
        process = subprocess.Popen(
            [str(script), "run", "fill_cup", "--situation", "the cup is dirty",
             "--llm-url", server.url, "--llm-model", "scripted", "--no-cache",
             "--report", str(report)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,  # a process group, as a terminal makes
        )  # fmt: skip
        try:
            assert asked.wait(120), "the model was never asked"
            time.sleep(0.5)
            sent = time.monotonic()
            os.killpg(process.pid, signal.SIGINT)
            # read the pipes while waiting: a command that fills one would never end
            _, err = process.communicate(timeout=30)
            seconds = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    print(f"Ctrl-C while the model answers: exit after {seconds:.2f} s")
    assert process.returncode == 130, err
    assert "cowp run: interrupted" in err and "Traceback" not in err
    assert strict(report)["outcome"] == "interrupted"
    assert seconds < 1.0


def test_each_command_imports_only_its_own_module() -> None:
    """The commands each module's source names are the ones it registers, and a command
    loads no other command's module (the benchmark's, the model client's)."""
    import subprocess
    import sys

    import cowp_ros.cli as cli

    full = cli.build_parser()
    choices = next(a for a in full._actions if a.dest == "command").choices
    assert choices is not None
    folder = Path(cli.__file__).parent
    named = {
        f.stem: cli.commands_in(f)
        for f in sorted(folder.glob("*.py"))
        if not f.stem.startswith("_")
    }
    assert set().union(*named.values()) == set(choices)
    assert all(named.values())  # every module's commands are read, none imported blindly
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from cowp_ros.cli import build_parser; build_parser(['replay', 'x']); "
            "print(sorted(m for m in sys.modules if m.startswith('cowp_ros.cli.')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "['cowp_ros.cli.bag']"
    # An unknown command still hears of every command there is.
    wrong = subprocess.run(
        [sys.executable, "-c", "from cowp_ros.cli import main; main(['replya'])"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert wrong.returncode == 2 and "replay" in wrong.stderr and "bench" in wrong.stderr
