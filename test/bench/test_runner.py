"""Trial draws (both protocols, half the house), blocking classification, --jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_fixtures import ANNOTATIONS, DATASET

from cowp_ros.bench import methods as registry
from cowp_ros.bench.annotations import load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.runner import (
    CONFERENCE,
    BenchSettings,
    Progress,
    check_config,
    comparable,
    draw_trial,
    run_one,
    run_trials,
    step_chance,
    trial_path,
)
from cowp_ros.errors import CowpError
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.llm.settings import Sampling
from cowp_ros.planning import make_planner
from cowp_ros.tasks import get_task

pytestmark = pytest.mark.skipif(
    not (DATASET / "situations.json").is_file(), reason="the public dataset is not here"
)
TASKS = ("fill_cup", "set_table", "eat_burger")


@pytest.fixture(scope="module")
def setup() -> tuple[SituationDataset, dict, object]:
    return SituationDataset.load(DATASET), load_annotations(ANNOTATIONS), make_planner("pyperplan")


def settings(**kw: object) -> BenchSettings:
    return BenchSettings(dataset=str(DATASET), p=kw.pop("p", 0.3), seed=0, **kw)  # type: ignore[arg-type]


def test_half_the_house_is_present_with_the_tasks_own_objects(setup) -> None:  # type: ignore[no-untyped-def]
    dataset, annotations, planner = setup
    for name in TASKS:
        spec = get_task(name)
        house = spec.load_house()
        assert len(house.problem_object_names) == 86
        trials = [
            draw_trial(spec, i, settings(), dataset, annotations[name], planner) for i in range(4)
        ]
        for trial in trials:
            present = trial.problem.problem_object_names
            assert len(present) == 43 and set(spec.task_objects) <= present
        # different halves in different trials, the same half for the same index
        assert len({t.problem.problem_object_names for t in trials}) == 4
        again = draw_trial(spec, 0, settings(), dataset, annotations[name], planner)
        assert again.problem.problem_object_names == trials[0].problem.problem_object_names
        assert again.events == trials[0].events


def test_the_house_adds_second_objects_and_keeps_the_tasks_init_and_goal() -> None:
    for name in ("fill_cup", "clean_area", "set_table", "plate_to_sink", "pour_coke", "eat_burger"):
        spec = get_task(name)
        problem, house = spec.load(), spec.load_house()
        assert problem.problem_object_names < house.problem_object_names
        assert problem.goal_atoms == house.goal_atoms
        only_house = house.problem_object_names - problem.problem_object_names
        extra = {a for a in house.init_atoms - problem.init_atoms if not set(a.args) & only_house}
        assert problem.init_atoms <= house.init_atoms and extra == set()
        for obj in spec.task_objects:  # a second object of every kind the task uses,
            kind = house.objects[obj]  # but for the one dirty area and the one room
            if kind not in ("area", "room"):
                assert len(house.objects_of_type(kind)) >= 2, (name, kind)


def test_the_journal_chance_follows_the_crowd(setup) -> None:  # type: ignore[no-untyped-def]
    dataset, _, _ = setup
    set_table = get_task("set_table")
    reports = {}
    for situation in dataset.for_task(6):
        for action, count in situation.at_actions:
            reports[action] = reports.get(action, 0) + count
    mean = sum(reports.values()) / len(reports)
    assert reports["walk"] == 1
    assert step_chance(dataset, set_table, "walk", 0.1) == pytest.approx(0.1 / mean)
    assert step_chance(dataset, set_table, "walk", 0.1) < 0.02
    assert step_chance(dataset, set_table, "find_plate", 0.1) > 0.3
    assert step_chance(dataset, set_table, "put_down", 0.1) == 0.0  # nobody reported one


def test_the_conference_protocol_raises_exactly_one_situation(setup) -> None:  # type: ignore[no-untyped-def]
    dataset, annotations, planner = setup
    spec = get_task("fill_cup")
    drawn = []
    for i in range(30):
        trial = draw_trial(
            spec, i, settings(protocol=CONFERENCE), dataset, annotations["fill_cup"], planner
        )
        (event,) = trial.events
        actions = [s.action for s in trial.reference]
        assert event.action in actions and actions.index(event.action) == event.at
        drawn.append(event.text)
    assert len(set(drawn)) > 3 and drawn.count("the cup is broken.") > drawn.count(
        "the cup is in the box."
    )


def test_the_closed_world_planner_handles_no_blocking_situation(setup) -> None:  # type: ignore[no-untyped-def]
    dataset, annotations, planner = setup
    cw = registry.select(["cw"])[0]
    blocking = 0
    for name in TASKS:
        spec = get_task(name)
        for i in range(8):
            trial = draw_trial(
                spec, i, settings(protocol=CONFERENCE), dataset, annotations[name], planner
            )
            record = run_one(cw, spec, trial, annotations[name], planner, None)
            (situation,) = record["situations"]
            blocking += situation["blocking"]
            # blocking exactly when the closed-world plan fails on it
            assert situation["blocking"] == (not record["completed"]), (name, i, situation)
            assert not situation["handled"]
    assert blocking > 10


def test_a_situation_is_about_the_object_the_plan_uses(setup) -> None:  # type: ignore[no-untyped-def]
    dataset, annotations, planner = setup
    spec = get_task("fill_cup")
    for i in range(40):
        trial = draw_trial(spec, i, settings(p=0.8), dataset, annotations["fill_cup"], planner)
        cup = trial.cast["cup_1"]
        used = {a for s in trial.reference for a in s.args}
        assert cup in used
        for event in trial.events:
            if event.text == "the cup is broken.":
                assert event.targets == (cup,)
        if cup != "cup_1":
            return
    pytest.fail("no trial's plan used another cup than cup_1: the cast is not exercised")


def scripted() -> ScriptedModel:
    return ScriptedModel(yes_no=[(r"if the cup is (dirty|broken)", False)], default_yes_no=True)


def test_jobs_give_the_records_of_one_job(tmp_path: Path, setup) -> None:  # type: ignore[no-untyped-def]
    dataset, annotations, planner = setup
    specs = [get_task("fill_cup"), get_task("pour_coke")]
    methods = registry.select(["oracle", "cw", "cowp"])
    runs = {}
    for jobs in (1, 3):
        out = tmp_path / f"jobs{jobs}"
        ran = run_trials(out, specs, methods, 4, settings(protocol=CONFERENCE), dataset,
                         annotations, planner, scripted, jobs=jobs)  # fmt: skip
        assert ran == 24
        runs[jobs] = {
            p.relative_to(out): comparable(json.loads(p.read_text()))
            for p in sorted((out / "trials").rglob("*.json"))
        }
    assert runs[1] == runs[3]
    assert any(r["usage"]["questions"] for r in runs[1].values())  # COWP asked its model
    assert trial_path(tmp_path, "cw", "fill_cup-0003").name == "fill_cup-0003.json"


class SamplingModel(ScriptedModel):
    """A scripted model that says which sampling each question was asked under."""

    def __init__(self) -> None:
        super().__init__(yes_no=[(r"if the cup is (dirty|broken)", False)], default_yes_no=True)
        self.sampling: Sampling | None = None
        self.asked_under: set[int] = set()

    def set_sampling(self, sampling: Sampling | None) -> None:
        self.sampling = sampling

    def _count(self) -> None:
        assert self.sampling is not None, "a question outside a sampled trial"
        self.asked_under.add(self.sampling.seed)
        super()._count()


def test_sampled_trials_each_have_their_own_seed_kept_in_the_record(
    tmp_path: Path,
    setup,  # type: ignore[no-untyped-def]
) -> None:
    dataset, annotations, planner = setup
    sampled = settings(protocol=CONFERENCE, temperature=0.7, sample_seed=5)
    model = SamplingModel()
    methods = registry.select(["cw", "cowp"])
    run_trials(tmp_path, [get_task("fill_cup")], methods, 3, sampled, dataset, annotations,
               planner, lambda: model)  # fmt: skip
    records = [json.loads(trial_path(tmp_path, "cowp", f"fill_cup-000{i}").read_text())
               for i in range(3)]  # fmt: skip
    seeds = [r["sampling"]["seed"] for r in records]
    assert {r["sampling"]["temperature"] for r in records} == {0.7}
    assert len(set(seeds)) == 3 and model.asked_under == set(seeds)
    assert seeds == [sampled.sampling_for("fill_cup", i).seed for i in range(3)]  # type: ignore[union-attr]
    assert model.sampling is None  # greedy again after the trial
    cw = json.loads(trial_path(tmp_path, "cw", "fill_cup-0000").read_text())
    assert "sampling" not in cw  # no model, nothing sampled
    # another sample seed, other samples; no temperature, no sampling at all
    other = settings(protocol=CONFERENCE, temperature=0.7, sample_seed=6)
    assert other.sampling_for("fill_cup", 0) != sampled.sampling_for("fill_cup", 0)
    assert settings().sampling_for("fill_cup", 0) is None


def test_a_folder_never_mixes_greedy_and_sampled_trials(tmp_path: Path) -> None:
    greedy = settings()
    assert "temperature" not in greedy.to_dict()  # a greedy config reads as before
    check_config(tmp_path, greedy)
    with pytest.raises(CowpError, match=r"other settings \(sample_seed, temperature\)"):
        check_config(tmp_path, settings(temperature=0.7))
    sampled = tmp_path / "sampled"
    check_config(sampled, settings(temperature=0.7, sample_seed=1))
    with pytest.raises(CowpError, match=r"other settings \(sample_seed\)"):
        check_config(sampled, settings(temperature=0.7, sample_seed=2))
    with pytest.raises(CowpError, match=r"other settings \(sample_seed, temperature\)"):
        check_config(sampled, greedy)


def test_a_model_that_cannot_sample_is_refused(setup) -> None:  # type: ignore[no-untyped-def]
    dataset, annotations, planner = setup
    spec = get_task("fill_cup")
    trial = draw_trial(spec, 0, settings(), dataset, annotations["fill_cup"], planner)
    cowp = registry.select(["cowp"])[0]
    with pytest.raises(CowpError, match="cannot sample"):
        run_one(cowp, spec, trial, annotations["fill_cup"], planner, scripted(), None,
                Sampling(0.7, 1))  # fmt: skip


def test_progress_shows_an_eta(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    progress = Progress(4, stream=sys.stdout)
    progress.update("a", skipped=True)
    progress.update("b")
    progress.update("c")
    progress.update("d")
    out = capsys.readouterr().out
    assert "4/4 (1 resumed)" in out and "eta" not in out.rsplit("\r", 1)[-1]
    progress = Progress(10, stream=sys.stdout)
    progress.update("a")
    assert "eta" in capsys.readouterr().out
