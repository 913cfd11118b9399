"""The loop on a user's own typed STRIPS domain, shaped unlike the shipped dining ones.

test/data/typed_domain has no `thing` root type: `vessel` is only ever named as a parent
(PDDL declares it implicitly), and `tap` and `bed` are top-level types of their own. The
loop used to declare a situation's predicate over the subject's top type, which was
`thing` in every shipped domain: here it was an undeclared type, and a second situation
about an object of another top type could not reuse the predicate. Runs go through
`cowp run` against the scripted server, as a user's would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cowp_unit_paths import REPO

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.cli import main
from cowp_ros.pddl import Atom, PlanningTask, edits
from cowp_ros.planning.fast_downward import is_available
from cowp_ros.tasks import get_task

TYPED = REPO / "test" / "data" / "typed_domain"


@pytest.fixture
def typed_registry(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COWP_PDDL_DIR", str(TYPED))
    return TYPED


def test_an_implicit_parent_type_is_a_type(typed_registry: Path) -> None:
    task = get_task("water_bed").load()
    assert task.types["vessel"] == "object" and task.types["can"] == "vessel"
    assert task.objects_of_type("vessel") == ["can_1", "jug_1"]


def test_a_fact_about_any_object_can_be_stated(typed_registry: Path) -> None:
    task = get_task("water_bed").load()
    task = edits.add_fact(task, Atom("is_broken", ("can_1",)))
    task = edits.add_fact(task, Atom("is_broken", ("tap_2",)))  # another top type
    task = edits.add_fact(task, Atom("is_broken", ("bed_1",)))
    assert PlanningTask.from_text(task.domain_text(), task.problem_text()).init_atoms == (
        task.init_atoms
    )


def _run(
    tmp_path: Path,
    model: SensibleModel,
    *situations: tuple[str, str],
    planner: str,
    method: str = "cowp",
) -> dict:
    report = tmp_path / "report.json"
    flags = [f for text, at in situations for f in ("--situation", text, "--at", at)]
    flags += ["--planner", planner, "--method", method]
    with ScriptedLLMServer(model) as server:
        code = main(
            ["run", "water_bed", *flags, "--llm-url", server.url, "--llm-model", "scripted",
             "--no-cache", "--report", str(report)]
        )  # fmt: skip
    data = json.loads(report.read_text())
    assert code in (0, 3), data.get("error")
    return data


@pytest.mark.parametrize("planner", ["pyperplan", "fast_downward"])
def test_cowp_run_on_a_domain_without_thing(
    typed_registry: Path, tmp_path: Path, planner: str
) -> None:
    if planner == "fast_downward" and not is_available():
        pytest.skip("up-fast-downward is not installed")
    model = SensibleModel(
        no=[r"robot to \w+ the can\b.*if the can is broken", r"open the tap, if the tap is broken"]
    )
    data = _run(
        tmp_path,
        model,
        ("the can is broken", "find_can"),
        ("the tap is broken", "open_tap"),
        planner=planner,
    )
    assert data["outcome"] == "completed", data["explanation"]
    facts = [e["fact"] for e in data["events"] if e["kind"] == "predicate"]
    assert facts == ["(is_broken can_1)", "(is_broken tap_2)"]
    learned = [e for e in data["events"] if e["kind"] == "learned"]
    assert learned and learned[0]["new_type"] == "jug"
    steps = [e["step"] for e in data["events"] if e["kind"] == "step"]
    assert "(open_tap tap_1)" in steps and "(open_tap tap_2)" not in steps


def test_the_grounded_method_runs_on_a_domain_without_thing(
    typed_registry: Path, tmp_path: Path
) -> None:
    model = SensibleModel(no=[r"The can is broken\. Can the robot still use the can\b"])
    data = _run(
        tmp_path, model, ("the can is broken", "find_can"), planner="pyperplan", method="grounded"
    )
    assert data["outcome"] == "completed", data["explanation"]
    facts = [e["fact"] for e in data["events"] if e["kind"] == "predicate"]
    assert facts == ["(is_broken can_1)"]


def test_cowp_run_on_the_battery_domain(tmp_path: Path) -> None:
    """The shipped domain whose `thing` is implicit (the issue's reproduction)."""
    model = SensibleModel(no=[r"The screw is broken\. Can the robot still use the screw\b"])
    report = tmp_path / "report.json"
    with ScriptedLLMServer(model) as server:
        code = main(
            ["run", "battery_disassembly", "--situation", "the screw is broken", "--at", "2",
             "--llm-url", server.url, "--llm-model", "scripted", "--no-cache",
             "--report", str(report)]
        )  # fmt: skip
    data = json.loads(report.read_text())
    assert code in (0, 3) and data["outcome"] in ("completed", "no_solution"), data.get("error")
    assert any(e["kind"] == "predicate" for e in data["events"])
