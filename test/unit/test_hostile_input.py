"""What a hostile peer or a careless operator can hand the core, bounded: the planner's
grounding and memory, PDDL size, phrase templates, task files, and the reports."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cowp_ros.cli import main
from cowp_ros.cli import run as run_cli
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import make_planner
from cowp_ros.tasks.phrases import ActionPhrases


def attack(n_objects: int = 30) -> tuple[str, str]:
    """A request of about 750 bytes: one action of 6 parameters over 30 objects."""
    domain = (
        "(define (domain boom) (:requirements :strips :typing) (:types thing)"
        " (:predicates (p ?a - thing) (q ?a - thing ?b - thing) (goal_reached))"
        " (:action blow :parameters (?a - thing ?b - thing ?c - thing ?d - thing"
        " ?e - thing ?f - thing) :precondition (and (p ?a) (p ?b) (p ?c) (p ?d) (p ?e) (p ?f))"
        " :effect (and (q ?a ?b) (q ?c ?d) (q ?e ?f))))"
    )
    objects = " ".join(f"o{i}" for i in range(n_objects))
    init = " ".join(f"(p o{i})" for i in range(n_objects))
    problem = (
        f"(define (problem boom1) (:domain boom) (:objects {objects} - thing)"
        f" (:init {init}) (:goal (goal_reached)))"
    )
    return domain, problem


# --- the planner -----------------------------------------------------------------------


def test_the_grounding_attack_is_refused_before_any_search() -> None:
    domain, problem = attack()
    assert len(domain) + len(problem) < 800
    task = PlanningTask.from_text(domain, problem, "request")
    started = time.monotonic()
    with pytest.raises(CowpError) as refused:
        make_planner("pyperplan").solve(task, 20.0)
    assert time.monotonic() - started < 5
    assert "729,000,000 actions" in str(refused.value)
    assert "'blow' has 6 parameters over 30 objects" in str(refused.value)


def negated_goal_attack(n_objects: int = 30) -> tuple[str, str]:
    """About 480 bytes: no action grounds more than once, but the goal negates a 6-ary
    predicate, whose STRIPS complement would list 30^6 facts."""
    args = " ".join(f"?{n} - thing" for n in "abcdef")
    domain = (
        "(define (domain neg) (:requirements :strips :typing :negative-preconditions)"
        f" (:types thing) (:predicates (p {args}) (done))"
        " (:action finish :parameters () :precondition (and) :effect (done)))"
    )
    objects = " ".join(f"o{i}" for i in range(n_objects))
    problem = (
        f"(define (problem n1) (:domain neg) (:objects {objects} - thing) (:init)"
        " (:goal (and (done) (not (p o0 o0 o0 o0 o0 o0)))))"
    )
    return domain, problem


@pytest.mark.parametrize("planner", ["pyperplan", "auto"])
def test_a_negated_goal_past_the_complement_bound_is_refused_at_once(planner: str) -> None:
    domain, problem = negated_goal_attack()
    assert len(domain) + len(problem) < 500
    task = PlanningTask.from_text(domain, problem, "request")
    started = time.monotonic()
    with pytest.raises(CowpError, match=r"729,000,000 complement facts, over the limit"):
        make_planner(planner).solve(task, 20.0)
    assert time.monotonic() - started < 5


def test_a_negated_goal_within_the_bound_still_plans() -> None:
    domain, problem = negated_goal_attack(n_objects=3)  # 729 complement facts
    result = make_planner("pyperplan").solve(PlanningTask.from_text(domain, problem), 30.0)
    assert result.found and [step.action for step in result.steps] == ["finish"]


def _chain(depth: int) -> str:
    types = " ".join(f"t{i} - t{i + 1}" for i in range(depth))
    return (
        f"(define (domain deep) (:requirements :strips :typing) (:types {types})"
        " (:predicates (done)) (:action a :parameters () :precondition (and) :effect (done)))"
    )


DONE = "(define (problem x) (:domain deep) (:init) (:goal (done)))"


@pytest.mark.parametrize(
    ("depth", "message"),
    [(600, r"has 33 ancestors, over the limit of 32"), (9000, r"9,000 types, over the limit")],
)
def test_a_deep_type_chain_is_refused_before_the_library_checks_it(
    depth: int, message: str
) -> None:
    """The library's cycle check costs the cube of a chain's depth (600 types: 21 s)."""
    started = time.monotonic()
    with pytest.raises(CowpError, match=message):
        PlanningTask.from_text(_chain(depth), DONE, "request")
    assert time.monotonic() - started < 2


def test_a_type_chain_within_the_bound_still_parses() -> None:
    task = PlanningTask.from_text(_chain(31), DONE, "request")
    assert task.types["t0"] == "t1"


def test_a_type_listed_under_many_parents_is_refused() -> None:
    types = " ".join(f"a - p{i}" for i in range(20))
    domain = _chain(1).replace("(:types t0 - t1)", f"(:types {types})")
    with pytest.raises(CowpError, match=r"type 'a' is listed under more than 4 parents"):
        PlanningTask.from_text(domain, DONE, "request")


def test_a_planner_past_its_memory_budget_ends_with_the_reason() -> None:
    """With the grounding bound lifted, the worker's address-space cap still stops it:
    the error names the budget, and the worker's own peak stayed under it."""
    domain, problem = attack()
    task = PlanningTask.from_text(domain, problem, "request")
    planner = make_planner("pyperplan", memory_mb=300, max_ground_actions=0)
    started = time.monotonic()
    with pytest.raises(CowpError) as refused:
        planner.solve(task, 60.0)
    message = str(refused.value)
    assert "ran out of its 300 MB memory budget" in message, message
    peak = float(message.split("peak ")[1].split(" MB")[0])
    assert 50 < peak <= 300
    assert time.monotonic() - started < 40


def test_the_reported_peak_is_the_workers_own_under_a_large_parent() -> None:
    """A planner node may hold far more memory than the worker's cap: the peak the error
    reports is the worker's own (a forked worker's ru_maxrss starts at its parent's)."""
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
held = bytearray(b"x" * (700 * 2**20))  # a parent larger than the worker's cap
from test_hostile_input import attack
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import make_planner
domain, problem = attack()
planner = make_planner("pyperplan", memory_mb=300, max_ground_actions=0)
try:
    planner.solve(PlanningTask.from_text(domain, problem, "request"), 60.0)
except CowpError as err:
    print(err)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    ).stdout
    assert "ran out of its 300 MB memory budget" in out, out
    assert float(out.split("peak ")[1].split(" MB")[0]) <= 300, out


def test_a_small_task_still_plans_under_the_bounds() -> None:
    domain, problem = attack(n_objects=3)  # 729 ground actions
    task = PlanningTask.from_text(domain, problem, "request")
    result = make_planner("pyperplan").solve(task, 20.0)
    assert result.status.value == "no_plan"


def test_pddl_past_its_size_is_refused_before_parsing() -> None:
    domain, problem = attack()
    padding = "; " + "x" * 100 + "\n"
    huge = domain + padding * 1500  # about 150 KB of comments
    started = time.monotonic()
    with pytest.raises(CowpError, match="over the limit of 131,072"):
        PlanningTask.from_text(huge, problem, "request")
    assert time.monotonic() - started < 1


# --- phrase templates ------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    ["fill {0:>20000000}", "fill {0!r}", "fill {0.__class__}", "fill {0[0]}", "fill {0:{1}}"],
)
def test_a_template_is_plain_fields_only(template: str) -> None:
    with pytest.raises(CowpError, match="only plain fields"):
        ActionPhrases({"fill_cup": template})


def test_a_plain_template_still_reads() -> None:
    phrases = ActionPhrases({"fill_cup": "fill {0} with water from {1}"})
    assert phrases.phrase("fill_cup", ["the cup", "the faucet"]) == (
        "fill the cup with water from the faucet"
    )


# --- task files ------------------------------------------------------------------------

DOMAIN = (
    "(define (domain d) (:requirements :strips) (:predicates (p))"
    " (:action a :parameters () :precondition (and) :effect (p)))"
)
PROBLEM = "(define (problem q) (:domain d) (:init) (:goal (p)))"


def registry(folder: Path, domain: str = "t/domain.pddl", phrase: str = "do it") -> Path:
    (folder / "t").mkdir(parents=True, exist_ok=True)
    (folder / "t" / "domain.pddl").write_text(DOMAIN)
    (folder / "t" / "problem.pddl").write_text(PROBLEM)
    (folder / "tasks.yaml").write_text(
        f"t:\n  description: a test\n  domain: {domain}\n  problem: t/problem.pddl\n"
        f"  task_objects: []\n  phrases:\n    a: '{phrase}'\n"
    )
    return folder


@pytest.mark.parametrize("domain", ["../outside.pddl", "/etc/hostname", "t/../../outside.pddl"])
def test_task_files_stay_in_the_registry_folder(
    domain: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "outside.pddl").write_text(DOMAIN)
    monkeypatch.setenv("COWP_PDDL_DIR", str(registry(tmp_path / "reg", domain)))
    assert main(["plan", "t"]) == 1
    err = capsys.readouterr().err
    assert "outside its folder" in err and "Traceback" not in err


def test_a_phrase_with_a_format_spec_in_tasks_yaml_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COWP_PDDL_DIR", str(registry(tmp_path, phrase="do {0:>20000000}")))
    assert main(["plan", "t"]) == 1
    captured = capsys.readouterr()
    assert "only plain fields" in captured.err and len(captured.out) < 10_000


def _load_capped(domain: Path, problem: Path) -> subprocess.CompletedProcess[str]:
    """Load a task in a child with 1 GB of address space and 60 s: a reader that
    follows /dev/zero must not take the test machine down with it."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    code = (
        "import sys\nfrom cowp_ros.errors import CowpError\n"
        "from cowp_ros.pddl import PlanningTask\n"
        "try:\n    PlanningTask.load(sys.argv[1], sys.argv[2])\n"
        "except CowpError as err:\n    print(err)\n    sys.exit(1)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(domain), str(problem)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap,
    )


def test_dev_zero_as_a_domain_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = registry(tmp_path)
    (folder / "t" / "domain.pddl").unlink()
    (folder / "t" / "domain.pddl").symlink_to("/dev/zero")
    loaded = _load_capped(folder / "t" / "domain.pddl", folder / "t" / "problem.pddl")
    assert loaded.returncode == 1 and "Traceback" not in loaded.stderr, loaded.stderr[-500:]
    assert "not a regular file (a device)" in loaded.stdout
    monkeypatch.setenv("COWP_PDDL_DIR", str(folder))
    assert main(["plan", "t"]) == 1  # the link leads out of the registry's folder
    err = capsys.readouterr().err
    assert "outside its folder" in err and "Traceback" not in err


def test_a_named_pipe_as_a_problem_does_not_hang(tmp_path: Path) -> None:
    folder = registry(tmp_path)
    (folder / "t" / "problem.pddl").unlink()
    os.mkfifo(folder / "t" / "problem.pddl")
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            PlanningTask.load(folder / "t" / "domain.pddl", folder / "t" / "problem.pddl")
        except BaseException as err:
            outcome.append(err)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(5.0)
    if reader.is_alive():  # unblock the reader the old way, so the test ends
        with open(folder / "t" / "problem.pddl", "w"):
            pass
        pytest.fail("reading a named pipe blocked")
    assert outcome and "named pipe" in str(outcome[0])


def test_a_huge_task_registry_is_refused(tmp_path: Path) -> None:
    from cowp_ros.tasks import all_tasks

    folder = registry(tmp_path)
    with (folder / "tasks.yaml").open("a") as stream:
        stream.write("# " + "x" * (5 * 2**20) + "\n")
    with pytest.raises(CowpError, match="over the limit"):
        all_tasks(folder)


# --- reports ---------------------------------------------------------------------------


def test_quick_reports_never_share_a_file(tmp_path: Path) -> None:
    from cowp_ros.cowp.report import write_new_report

    paths = {write_new_report(f'{{"n": {i}}}', tmp_path, "run", "goal") for i in range(6)}
    assert len(paths) == 6
    assert sorted(json.loads(p.read_text())["n"] for p in paths) == list(range(6))


def test_a_planted_symlink_is_replaced_not_followed(tmp_path: Path) -> None:
    from cowp_ros.cowp.report import CowpReport

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "reports").mkdir()
    link = tmp_path / "reports" / "report.json"
    link.symlink_to(victim)
    CowpReport("t", "a test", "pyperplan", "none", outcome="completed").write(link)
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and json.loads(link.read_text())["outcome"] == "completed"


def test_a_report_folder_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    from cowp_ros.cowp.report import CowpReport

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "reports").symlink_to(elsewhere)
    report = CowpReport("t", "a test", "pyperplan", "none", outcome="completed")
    with pytest.raises(CowpError, match=r"is a symbolic link \(to .*elsewhere\)"):
        report.write(tmp_path / "reports" / "report.json")
    assert list(elsewhere.iterdir()) == []
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(CowpError, match=r"dangling is a symbolic link"):
        report.write(tmp_path / "dangling" / "report.json")
    assert not (tmp_path / "nowhere").exists()


def test_a_device_as_the_reports_folder_says_what_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    @contextlib.contextmanager
    def open_model(args: Any) -> Iterator[ScriptedModel]:
        yield ScriptedModel()

    monkeypatch.setattr(run_cli, "open_model", open_model)
    monkeypatch.setenv("COWP_REPORTS_DIR", "/dev/full")
    assert main(["run", "fill_cup"]) != 0
    err = capsys.readouterr().err
    assert "/dev/full: it is a device, not a folder" in err and "Traceback" not in err


def test_a_failed_write_leaves_the_old_report_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cowp_ros.cowp.report import CowpReport

    path = tmp_path / "report.json"
    CowpReport("t", "a test", "pyperplan", "none", outcome="completed").write(path)
    before = path.read_text()

    def full_disk(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(CowpError, match="No space left"):
        CowpReport("t", "a test", "pyperplan", "none", outcome="aborted").write(path)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_cowp_run_fails_when_its_report_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    @contextlib.contextmanager
    def open_model(args: Any) -> Iterator[ScriptedModel]:
        yield ScriptedModel()

    monkeypatch.setattr(run_cli, "open_model", open_model)
    (tmp_path / "a_file").write_text("")
    code = main(["run", "fill_cup", "--report", str(tmp_path / "a_file" / "report.json")])
    assert code != 0
    assert "cannot write the report" in capsys.readouterr().err


# --- the model's questions per request -------------------------------------------------


def test_one_request_asks_the_model_at_most_so_many_questions() -> None:
    from cowp_ros.llm.question_budget import QuestionBudget

    model = QuestionBudget(ScriptedModel(), limit=3)
    for _ in range(3):
        model.ask_yes_no("Is it suitable to fill a cup with water?")
    with pytest.raises(CowpError, match="more than 3 questions"):
        model.complete("the cup is dirty")
    assert model.name == ScriptedModel().name
