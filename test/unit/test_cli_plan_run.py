"""`cowp plan` and `cowp run`: real planning, the narrative, the report, clear errors."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cowp_unit_paths import REPO

from cowp_ros.cli import main
from cowp_ros.cli import run as run_cli
from cowp_ros.llm.client import WARM_QUESTION
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.planning.fast_downward import is_available

RUN_CLI = "import sys; from cowp_ros.cli import main; sys.exit(main())"


def test_cowp_plan_prints_the_plan_in_english_and_pddl() -> None:
    script = Path(sys.executable).with_name("cowp")
    command = [str(script)] if script.is_file() else [sys.executable, "-c", RUN_CLI]
    done = subprocess.run(
        [*command, "plan", "fill_cup"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "task: fill_cup" in out
    assert "fill the cup with water from the faucet" in out
    assert "(fill_cup cup_1 faucet_1)" in out
    assert out.index("(hold_cup cup_1)") < out.index("(fill_cup cup_1 faucet_1)")


@pytest.mark.skipif(not is_available(), reason="up-fast-downward is not installed in this venv")
def test_cowp_plan_with_fast_downward_and_43_objects(capsys) -> None:
    assert main(["plan", "10", "--planner", "fd", "--objects", "43"]) == 0
    out = capsys.readouterr().out
    assert "43 objects present" in out
    assert "plan by fast_downward" in out
    assert "pour the coke into the glass on the table" in out


def test_unknown_task_lists_the_known_ones(capsys) -> None:
    assert main(["plan", "make_coffee"]) == 1
    err = capsys.readouterr().err
    assert "unknown task 'make_coffee'" in err
    assert "serve_water" in err and "Traceback" not in err


@pytest.fixture
def scripted(monkeypatch) -> ScriptedModel:
    model = ScriptedModel(
        yes_no=[("hold the cup, if the cup is dirty", False), ("if ", True), ("bowl", True)],
        default_yes_no=False,
    )

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    return model


def test_cowp_run_tells_the_story_and_writes_the_report(
    scripted: ScriptedModel, capsys, tmp_path: Path
) -> None:
    report = tmp_path / "out" / "report.json"
    code = main(
        ["run", "fill_cup", "--method", "cowp", "--situation", "the cup is dirty",
         "--at", "hold_cup", "--report", str(report)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    for label in ("PLAN ", "SAW  ", "ASK  ", "THINK", "PDDL ", "PICK ", "LEARN", "DO   ", "END  "):
        assert f"\n{label} " in f"\n{out}", label
    assert "outcome: completed: used a bowl instead of the cup: the cup is dirty" in out
    data = json.loads(report.read_text())
    assert data["task"] == "fill_cup" and data["outcome"] == "completed"
    assert data["model"] == "scripted"


def test_cowp_run_situation_at_a_step_number(scripted: ScriptedModel, capsys) -> None:
    code = main(
        ["run", "4", "--method", "cowp", "--situation", "the cup is dirty", "--at", "3",
         "--quiet"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert out.strip().splitlines() == [
        "outcome: completed: used a bowl instead of the cup: the cup is dirty"
    ]


def test_cowp_run_no_solution_exits_non_zero(monkeypatch, capsys) -> None:
    model = ScriptedModel(default_yes_no=False)

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    assert main(["run", "fill_cup", "--situation", "the cup is broken", "--quiet"]) == 3
    assert "outcome: no_solution: gave up: the cup is broken" in capsys.readouterr().out


def test_cowp_run_refuses_bad_flags(capsys) -> None:
    assert main(["run", "fill_cup", "--at", "2"]) == 1
    assert "more --at than --situation" in capsys.readouterr().err
    assert main(["run", "fill_cup", "--situation", "x", "--at", "0"]) == 1
    assert "numbered from 1" in capsys.readouterr().err


def test_cowp_run_with_an_unreachable_server_is_a_clear_error(capsys, tmp_path: Path) -> None:
    code = main(
        ["run", "fill_cup", "--situation", "the cup is dirty", "--objects", "5",
         "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "nobody", "--quiet"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "127.0.0.1:9" in err and "Traceback" not in err


def test_cowp_run_grounded_decides_once_and_tries_the_closest_kind_first(
    monkeypatch, capsys
) -> None:
    model = ScriptedModel(
        yes_no=[
            (r"The cup is dirty\. Can the robot still use the cup", False),
            (r"Can a (mug|glass|bottle|bowl) be used instead", 0.97),
        ],
        default_yes_no=True,
    )

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    code = main(
        ["run", "fill_cup", "--method", "grounded", "--situation", "the cup is dirty",
         "--at", "hold_cup", "--quiet"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "instead of the cup: the cup is dirty" in out
    asked = model.questions("yes_no")
    assert sum("The cup is dirty. Can the robot still use" in q for q in asked) == 1
    # Asked when the plan was made: each role's clean need, and whether the task calls
    # it dirty (cup, faucet, table); then at most 8 about the situation.
    ahead = next(i for i, q in enumerate(asked) if "The cup is dirty" in q)
    assert ahead <= 6 and len(asked) - ahead <= 8


def test_the_narrative_says_the_judgement_in_words_and_the_report_keeps_the_score(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    model = ScriptedModel(yes_no=[(r"The cup is cracked\. Can the robot still use the cup", 0.13)])

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    report = tmp_path / "report.json"
    main(["run", "fill_cup", "--situation", "the cup is cracked", "--at", "hold_cup",
          "--report", str(report)])  # fmt: skip
    out = capsys.readouterr().out
    assert "judged that the cup can no longer be used (confidence 0.87)" in out
    assert "blocked score" not in out
    events = json.loads(report.read_text())["events"]
    asked = [e for e in events if e["kind"] == "monitor" and e["situation"]]
    assert asked[0]["p_yes"] == pytest.approx(0.13)
    assert asked[0]["score"] == pytest.approx(1.90, abs=0.01)  # log-odds of "no"
    assert "threshold" in asked[0] and asked[0]["variant"] == "question"


class WarmingModel(ScriptedModel):
    """A scripted model that counts the prefix reads a run asks of its server."""

    def __init__(self) -> None:
        super().__init__(yes_no=[], default_yes_no=True)
        self.warmed: list[str] = []

    def warm(self, examples=(), question: str = "") -> None:
        self.warmed.append(question)


@pytest.mark.parametrize("situations", [[], ["--situation", "the cup is blue", "--at", "hold_cup"]])
def test_cowp_run_reads_the_monitor_prefix_ahead_only_when_a_situation_can_come(
    monkeypatch, capsys, situations: list[str]
) -> None:
    model = WarmingModel()

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    assert main(["run", "fill_cup", "--quiet", *situations]) == 0
    assert capsys.readouterr().out.strip().startswith("outcome: completed")
    if situations:
        # Before the plan, and again after the plan's roles were asked about (their
        # need question leaves the server's prompt cache elsewhere).
        warmed = "Task: filling a cup with water from the faucet. " + WARM_QUESTION
        assert model.warmed == [warmed, warmed]
    else:
        assert model.warmed == []
