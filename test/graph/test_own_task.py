"""A task of one's own, from files outside the checkout: added to the shipped tasks
(`--tasks`, `COWP_TASKS`), run with no registry entry (`--domain/--problem`), through
`cowp run` with a situation that needs a stand-in."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from own_task import write_own_task

from cowp_ros.cli import main
from cowp_ros.cli import run as run_cli
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.tasks.sources import TASKS_ENV


@pytest.fixture(autouse=True)
def _shipped_tasks_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--tasks` adds to this process's environment: give it back after each test."""
    monkeypatch.setenv(TASKS_ENV, "")
    monkeypatch.delenv("COWP_PDDL_DIR", raising=False)


@pytest.fixture
def own_task(tmp_path: Path) -> Path:
    return write_own_task(tmp_path / "my_tasks")


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    model = ScriptedModel(
        yes_no=[
            (r"the can has a hole[^.]*\. Can the robot still use", False),
            (r"Can a jug be used instead of the can", 0.97),
            (r"instead of the can", 0.02),
        ],
        default_yes_no=True,
    )

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    return model


def test_an_added_registry_joins_the_shipped_tasks(own_task: Path, capsys) -> None:
    assert main(["plan", "--tasks", str(own_task), "water_plant"]) == 0
    out = capsys.readouterr().out
    assert "walk from the shelf to the sink" in out and "(walk_to shelf_1 sink_1)" in out
    # the shipped tasks are still there, in the same process and with the variable
    assert main(["plan", "serve_water"]) == 0
    capsys.readouterr()


def test_the_environment_variable_adds_a_registry_too(
    own_task: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv(TASKS_ENV, str(own_task.parent))  # a folder holding tasks.yaml
    assert main(["plan", "water_the_plant"]) == 0
    assert main(["plan", "fill_cup"]) == 0
    out = capsys.readouterr().out
    assert "task: water_plant" in out and "task: fill_cup" in out


def test_a_name_the_shipped_registry_holds_is_refused(tmp_path: Path, capsys) -> None:
    registry = write_own_task(tmp_path)
    registry.write_text(registry.read_text().replace("water_plant:\n", "serve_water:\n", 1))
    assert main(["plan", "--tasks", str(registry), "serve_water"]) == 1
    err = capsys.readouterr().err
    assert "task 'serve_water' of" in err and "already defined in" in err
    assert "Traceback" not in err


def test_a_missing_registry_is_named(tmp_path: Path, capsys) -> None:
    assert main(["plan", "--tasks", str(tmp_path / "nowhere.yaml"), "serve_water"]) == 1
    err = capsys.readouterr().err
    assert "nowhere.yaml" in err and "neither a task registry file" in err


def test_cowp_run_own_task_needs_a_stand_in(
    own_task: Path, scripted: ScriptedModel, tmp_path: Path, capsys
) -> None:
    report = tmp_path / "report.json"
    code = main(
        ["run", "--tasks", str(own_task), "water_plant", "--situation",
         "the can has a hole in its bottom", "--at", "grasp_can", "--report", str(report)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "used a jug instead of the can" in out
    data = json.loads(report.read_text())
    assert data["outcome"] == "completed"
    assert any("jug_1" in e["text"] for e in data["events"] if e["kind"] == "plan")


def test_cowp_run_domain_and_problem_with_no_registry_entry(
    own_task: Path, scripted: ScriptedModel, capsys
) -> None:
    folder = own_task.parent / "water_plant"
    code = main(
        ["run", "--domain", str(folder / "domain.pddl"), "--problem",
         str(folder / "problem.pddl"), "--description", "watering the plant",
         "--situation", "the can has a hole in its bottom", "--at", "2", "--quiet"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "outcome: completed: used a jug instead of the can" in out


def test_task_files_and_at_are_checked_before_the_model_starts(
    own_task: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
) -> None:
    @contextlib.contextmanager
    def no_model(args) -> Iterator[ScriptedModel]:
        raise AssertionError("the model was started")
        yield

    monkeypatch.setattr(run_cli, "open_model", no_model)
    folder = own_task.parent / "water_plant"
    missing = ["run", "--domain", str(tmp_path / "no.pddl"), "--problem",
               str(folder / "problem.pddl"), "--situation", "x"]  # fmt: skip
    assert main(missing) == 1
    assert "no.pddl: no such file" in capsys.readouterr().err
    assert main(["run", "fill_cup", "--situation", "x", "--at", "fly_away"]) == 1
    err = capsys.readouterr().err
    assert "--at fly_away: the domain has no such action" in err and "hold_cup" in err
    assert main(["run", "fill_cup", "--situation", "x", "--at", "40"]) == 1
    assert "--at 40: the closed-world plan has" in capsys.readouterr().err


def _own_skill_map(registry: Path):
    from cowp_ros.resources import share_path
    from cowp_ros.skills.roles import with_tasks
    from cowp_ros.skills.skill_map import load_skill_map
    from cowp_ros.tasks import all_tasks

    main(["plan", "--tasks", str(registry), "water_plant"])  # adds the registry
    return with_tasks(load_skill_map(share_path("config", "skills.yaml")), all_tasks().values())


def test_skills_bind_the_destination_by_its_parameter_name(own_task: Path, capsys) -> None:
    skills = _own_skill_map(own_task)
    capsys.readouterr()
    # walk_to ?from ?to: the base drives to ?to, not to where it already is
    call = skills.resolve("walk_to", ["shelf_1", "sink_1"])
    assert call.skill.name == "navigate" and call.roles == {"location": "sink_1"}
    # serve_water's walk_to ?p is bound by its own name
    assert skills.resolve("walk_to", ["faucet_1"]).roles == {"location": "faucet_1"}
    # the task's own binding, by name, and the same for an acquired variant
    call = skills.resolve("water_plant__can_as_jug", ["jug_1", "plant_spot_1"])
    assert call.skill.name == "pour" and call.roles == {"location": "plant_spot_1"}
    assert skills.object_locations["plant_spot"] == "dining_area"


def test_a_name_binding_without_the_actions_parameters_is_an_error() -> None:
    from cowp_ros.errors import CowpError
    from cowp_ros.resources import share_path
    from cowp_ros.skills.skill_map import load_skill_map

    bare = load_skill_map(share_path("config", "skills.yaml"))  # no domain known
    with pytest.raises(CowpError, match=r"binds role 'location' to \?to or \?p"):
        bare.resolve("walk_to", ["shelf_1", "sink_1"])


def test_doctor_lists_every_action_with_its_skill(own_task: Path, capsys) -> None:
    assert main(["doctor", "--tasks", str(own_task), "--task", "water_plant"]) == 0
    out = capsys.readouterr().out
    assert "walk_to(?from - place ?to - place) -> navigate location=?to (action)" in out
    assert "water_plant(?c - can ?p - plant_spot) -> pour location=?p (action)" in out
    assert "fill_can(?c - can ?s - sink) -> fill source=?s (pattern fill_)" in out
    assert "every action of water_plant runs a skill" in out


def test_doctor_names_an_action_no_skill_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    registry = write_own_task(tmp_path)
    text = registry.read_text().split("  skills:")[0]  # no binding of its own for water_plant
    registry.write_text(text)
    assert main(["doctor", "--tasks", str(registry), "--task", "water_plant"]) == 1
    out = capsys.readouterr().out
    assert "water_plant(?c - can ?p - plant_spot) -> NO SKILL: no skill for PDDL action" in out
    assert "1 action(s) run no skill: water_plant" in out


def test_the_executor_names_at_start_up_each_action_no_skill_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cowp_ros.resources import share_path
    from cowp_ros.skills.roles import registered_skill_map
    from cowp_ros.skills.skill_map import load_skill_map

    registry = write_own_task(tmp_path)
    registry.write_text(registry.read_text().split("  skills:")[0])
    monkeypatch.setenv(TASKS_ENV, str(registry))
    skills, unbound = registered_skill_map(load_skill_map(share_path("config", "skills.yaml")))
    assert unbound == [
        "task water_plant: water_plant(?c - can ?p - plant_spot) -> NO SKILL: no skill for "
        f"PDDL action 'water_plant' in {share_path('config', 'skills.yaml')}"
    ]
    assert skills.resolve("walk_to", ["shelf_1", "sink_1"]).roles == {"location": "sink_1"}


def _scripted(monkeypatch: pytest.MonkeyPatch, rules: list) -> ScriptedModel:
    model = ScriptedModel(yes_no=rules, default_yes_no=True)

    @contextlib.contextmanager
    def fake_open_model(args) -> Iterator[ScriptedModel]:
        yield model

    monkeypatch.setattr(run_cli, "open_model", fake_open_model)
    return model


def test_the_narrative_shows_the_cut_off_a_yes_did_not_reach(
    own_task: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _scripted(
        monkeypatch,
        [
            (r"the can has a hole[^.]*\. Can the robot still use", False),
            (r"Can a jug be used instead of the can", 0.898),
            (r"instead of the can", 0.02),
        ],
    )
    code = main(
        ["run", "--tasks", str(own_task), "water_plant", "--situation",
         "the can has a hole in its bottom", "--at", "grasp_can"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 3, out  # no solution
    assert "(P 0.898, needs 0.90): not fit for the role" in out
    assert "a jug: not fit for the role (P 0.898, needs 0.90)" in out


def test_a_domain_with_no_put_down_is_named_as_the_cause(
    own_task: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _scripted(
        monkeypatch,
        [
            (r"the can has a hole[^.]*\. Can the robot still use", False),
            (r"Can a jug be used instead of the can", 0.97),
            (r"instead of the can", 0.02),
        ],
    )
    domain = own_task.parent / "water_plant" / "domain.pddl"
    text = domain.read_text()
    start = text.index("  (:action put_down")
    domain.write_text(text[:start] + text[text.index("  (:action water_plant") :])
    code = main(
        ["run", "--tasks", str(own_task), "water_plant", "--situation",
         "the can has a hole in its bottom", "--at", "fill_can"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 3, out  # no solution
    assert (
        "the robot holds can_1 ((holding can_1)) and the domain has no action to put it "
        "down (only actions that do the task's work end holding)" in out
    ), out


def test_cowp_skill_reads_your_own_tasks(own_task: Path, capsys) -> None:
    assert main(["skill", "water_plant", "can_1", "plant_spot_1"]) == 1
    assert "no skill for PDDL action 'water_plant'" in capsys.readouterr().err
    assert main(["skill", "--tasks", str(own_task), "water_plant", "can_1", "plant_spot_1"]) == 0
    out = capsys.readouterr().out
    assert "drive to dining_area" in out and "dry run: nothing moved" in out


def test_cowp_run_prints_the_report_path_absolute(
    own_task: Path, scripted: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from cowp_ros.cowp.report import REPORTS_DIR_ENV

    monkeypatch.delenv(REPORTS_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--tasks", str(own_task), "water_plant", "--quiet"])
    said = capsys.readouterr()
    out = said.out + said.err
    assert code == 0, out
    (line,) = [line for line in out.splitlines() if line.startswith("report: ")]
    path = Path(line.removeprefix("report: "))
    assert path.is_absolute() and path.is_file()
    assert path.parent == tmp_path / "build" / "reports"


def test_a_world_made_from_the_tasks_own_problem(own_task: Path, tmp_path: Path) -> None:
    from cowp_ros.cli._task_world import write_task_world
    from cowp_ros.sim.scenario import load_scenario

    main(["plan", "--tasks", str(own_task), "water_plant"])  # adds the registry
    scenario = load_scenario(str(write_task_world("water_plant", tmp_path)))
    assert scenario.task == "water_plant" and scenario.events == ()
    where = {name: (o.location, o.graspable) for name, o in scenario.objects.items()}
    assert where == {
        "can_1": ("shelf", True),  # the task's object_locations
        "jug_1": ("counter", True),
        "vase_1": ("counter", True),
        "shelf_1": ("shelf", False),  # a place: nothing the domain lets the robot hold
        "sink_1": ("sink", False),
        "plant_spot_1": ("dining_area", False),
    }


def test_a_task_world_names_an_object_with_no_location_and_the_fix(tmp_path: Path, capsys) -> None:
    from cowp_ros.cli._task_world import write_task_world
    from cowp_ros.errors import CowpError

    registry = write_own_task(tmp_path / "mine")
    registry.write_text(registry.read_text().replace("vase: counter, ", ""))
    main(["plan", "--tasks", str(registry), "water_plant"])
    capsys.readouterr()
    with pytest.raises(CowpError) as caught:
        write_task_world("water_plant", tmp_path / "world")
    assert "no location for vase_1 (vase)" in caught.value.message
    assert "add 'vase: LOCATION' to object_locations of water_plant" in caught.value.hint


def test_demo_refuses_a_task_and_a_scenario_of_another(tmp_path: Path, capsys) -> None:
    code = main(
        ["demo", "--task", "fill_cup", "--scenario", "serve_water_dirty_cup", "--out",
         str(tmp_path / "demo")]
    )  # fmt: skip
    assert code == 1
    assert "--task fill_cup and --scenario serve_water_dirty_cup" in capsys.readouterr().err
    assert not (tmp_path / "demo").exists()  # nothing started
