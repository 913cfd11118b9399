"""No method can read the answers: the robot's view, the imports, the privileged access."""

from __future__ import annotations

import ast
import contextlib
import gc
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_fixtures import fill_cup, situation

from cowp_ros.bench import methods as registry
from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.runner import Trial, privileged_for, run_one
from cowp_ros.bench.simulator import TrialWorld
from cowp_ros.bench.view import MethodLeakError
from cowp_ros.errors import CowpError
from cowp_ros.planning import make_planner
from cowp_ros.planning.pyperplan_planner import WORKER

METHODS_DIR = Path(registry.__file__).parent
PACKAGE = METHODS_DIR.parents[1]
METHOD_PACKAGES = [METHODS_DIR, PACKAGE / "methods", PACKAGE / "cowp"]
"""Every package whose code runs in a method's process: the bench's methods, the
situation methods of the registry, and the COWP loop they drive."""
JUDGE_MODULES = {
    "cowp_ros.bench.annotations",
    "cowp_ros.bench.runner",
    "cowp_ros.bench.results",
    "cowp_ros.bench.privileged",
    "cowp_ros.bench.solvability",
    "cowp_ros.bench.dataset",
    "cowp_ros.bench.schedule",
    "cowp_ros.bench.seal",
}
SEALED_WORDS = ("benchmarks/annotations", "benchmarks/results", "default_dataset_dir")
ALLOWED_FROM_SIMULATOR = {"Episode", "StepObservation"}


class Peeker:
    """A method that tries to read what only the judge may: the record, the file..."""

    name = "peeker"
    label = "Peeker"
    uses_llm = False
    summary = "reads the judge"
    looks_at = "annotation"

    def __init__(self, context: MethodContext) -> None:
        self.context = context

    def run(self, episode: object) -> None:
        getattr(episode, self.looks_at)


LOOKS_AT = ["annotation", "record", "events", "_pending", "disabled", "spec"]
PEEKERS = {
    name: type(f"Peeker_{name}", (Peeker,), {"looks_at": name, "__module__": __name__})
    for name in LOOKS_AT
}
globals().update({cls.__name__: cls for cls in PEEKERS.values()})  # methods are importable


@pytest.mark.parametrize("name", LOOKS_AT)
def test_a_method_that_reads_the_judge_or_the_schedule_fails_clearly(name: str) -> None:
    spec, task, annotation = fill_cup()
    planner = make_planner("pyperplan")
    trial = Trial("fill_cup", 0, 1, task, (), (situation("the cup is dirty.", "hold_cup"),))
    peeker = PEEKERS[name]
    record = run_one(peeker, spec, trial, annotation, planner, None)
    assert "MethodLeakError: a benchmark method asked the robot's view" in record["error"]
    assert repr(name) in record["error"] and not record["completed"]
    with pytest.raises(MethodLeakError, match="cannot set"):
        TrialWorld(spec, task, (), annotation, max_attempts=3).view().annotation = None  # type: ignore[attr-defined]


def _imports(path: Path) -> list[tuple[str, set[str]]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, {a.name for a in node.names}))
        elif isinstance(node, ast.Import):
            found.extend((a.name, set()) for a in node.names)
    return found


def test_no_method_but_the_oracle_imports_the_judge_in_any_method_package() -> None:
    for package in METHOD_PACKAGES:
        modules = sorted(package.rglob("*.py"))
        assert len(modules) > 5, package
        for path in modules:
            shown = path.relative_to(PACKAGE)
            if path == METHODS_DIR / "oracle.py":
                continue
            # the protocol module names the oracle's access as a type, nothing more
            barred = (
                JUDGE_MODULES - {"cowp_ros.bench.privileged"}
                if path == METHODS_DIR / "__init__.py"
                else JUDGE_MODULES
            )
            for module, names in _imports(path):
                assert module not in barred, f"{shown} imports {module}"
                assert module != "cowp_ros.llm.evaluation", f"{shown} imports {module}"
                if module == "cowp_ros.bench.simulator":
                    assert names <= ALLOWED_FROM_SIMULATOR, f"{shown} imports {names}"
            text = path.read_text()
            assert not [w for w in SEALED_WORDS if w in text], shown


def test_the_import_test_reads_every_method_package() -> None:
    """A package of methods added beside these would escape the test above: every folder
    of cowp_ros whose modules a method's process runs is one of METHOD_PACKAGES."""

    def package_of(function: object) -> Path:
        module = sys.modules[getattr(function, "__module__", "")]
        return Path(str(module.__file__)).resolve()

    def inside(path: Path) -> bool:
        return any(path.is_relative_to(p) for p in METHOD_PACKAGES)

    for name, cls in registry.discover().items():
        assert inside(package_of(cls)), f"method {name} lives in {package_of(cls)}"
        entry = getattr(cls, "entry", None)
        if entry is not None:  # a registered situation method: its parts, and its loop's
            for part in (entry.reasoners, entry.loop, entry.trace):
                if part is not None:  # a method may have no reasoners or keep no trace
                    assert inside(package_of(part)), f"{name}: {package_of(part)}"


def test_eks_knowledge_does_not_come_from_the_judge_files() -> None:
    path = METHODS_DIR / "ek.py"
    imported = {module for module, _ in _imports(path)}
    assert not imported & JUDGE_MODULES
    tree = ast.parse(path.read_text())
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not attributes & {"annotation", "stand_ins", "accepted_kinds", "accepts", "acceptable"}
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert not [s for s in strings if isinstance(s, str) and "annotations" in s]


def test_only_the_registered_oracle_gets_privileged_access() -> None:
    spec, task, annotation = fill_cup()
    world = TrialWorld(spec, task, (), annotation, max_attempts=3)
    oracle = registry.discover()["oracle"]
    assert privileged_for(oracle, world) is not None
    assert privileged_for(registry.discover()["cw"], world) is None
    impostor = type("Impostor", (Peeker,), {"privileged": True, "name": "impostor"})
    with pytest.raises(CowpError, match="asks for privileged access"):
        privileged_for(impostor, world)
    # a class that copies the oracle's names is not the oracle: privilege is by identity
    twin = type("Oracle", (Peeker,), {"privileged": True, "name": "oracle"})
    twin.__module__, twin.__qualname__ = oracle.__module__, oracle.__qualname__
    with pytest.raises(CowpError, match="asks for privileged access"):
        privileged_for(twin, world)


def test_method_context_carries_no_judge_file() -> None:
    fields = set(MethodContext.__dataclass_fields__)
    assert "annotation" not in fields
    assert fields == {"spec", "planner", "model", "seed", "options", "privileged"}


# ---- the audit's attacks on the boundary ----------------------------------------------


def _cheat(world: TrialWorld) -> None:
    world.record.goal_reached = world.record.completed = True


class _Attack:
    label = "attack"
    uses_llm = False
    summary = "tries to reach the world past the robot's view"

    def __init__(self, context: MethodContext) -> None:
        self.context = context


class HooksAttack(_Attack):
    name = "hooks_attack"

    def run(self, episode: Any) -> None:
        _cheat(episode._hooks().execute.__self__)


class FrameAttack(_Attack):
    name = "frame_attack"

    def run(self, episode: Any) -> None:
        with contextlib.suppress(KeyError):  # the audit's own form finds nothing
            sys._getframe(1).f_locals["trial"]
        frame = sys._getframe(1)
        while frame is not None:
            for value in frame.f_locals.values():
                if isinstance(value, TrialWorld):
                    _cheat(value)
                    return
            frame = frame.f_back
        raise RuntimeError("no trial or world in any frame of this process")


class GcAttack(_Attack):
    name = "gc_attack"

    def run(self, episode: Any) -> None:
        worlds = [o for o in gc.get_objects() if isinstance(o, TrialWorld)]
        if not worlds:
            raise RuntimeError("gc.get_objects() holds no TrialWorld in this process")
        _cheat(worlds[0])


class TokenAttack(_Attack):
    name = "token_attack"

    def run(self, episode: Any) -> None:
        from cowp_ros.bench.boundary import RemotePrivilege

        RemotePrivilege(episode._conn, "0" * 32).disabled()


@pytest.mark.parametrize(
    ("attack", "error"),
    [
        (HooksAttack, "MethodLeakError: a benchmark method asked the robot's view for its hooks"),
        (FrameAttack, "RuntimeError: no trial or world in any frame"),
        (GcAttack, "RuntimeError: gc.get_objects() holds no TrialWorld"),
        (TokenAttack, "no privileged access for this method in this trial"),
    ],
)
def test_the_audits_attacks_do_not_cross_the_boundary(attack: type, error: str) -> None:
    spec, task, annotation = fill_cup()
    planner = make_planner("pyperplan")
    trial = Trial("fill_cup", 0, 1, task, (), (situation("the cup is dirty.", "hold_cup"),))
    record = run_one(attack, spec, trial, annotation, planner, None)
    assert error in record["error"]
    assert not record["completed"] and not record["goal_reached"]


def test_a_class_named_like_the_oracle_gets_no_privilege_and_cannot_run_as_it() -> None:
    spec, task, annotation = fill_cup()
    oracle = registry.discover()["oracle"]
    twin = type("Oracle", (_Attack,), {"privileged": True, "name": "oracle"})
    twin.__module__, twin.__qualname__ = oracle.__module__, oracle.__qualname__
    trial = Trial("fill_cup", 0, 1, task, (), ())
    with pytest.raises(CowpError, match="asks for privileged access"):
        run_one(twin, spec, trial, annotation, make_planner("pyperplan"), None)
    # the oracle itself, through the same boundary, completes the trial
    record = run_one(oracle, spec, trial, annotation, make_planner("pyperplan"), None)
    assert record["completed"] and not record["error"]


# ---- the seal: no draw seed, and no judge, dataset or records on disk ----------------


class RedrawAttack(_Attack):
    """The audit's re-draw: the trial's seed, the dataset and the judge files are all it
    needs to know the situations to come; it tries every way it has to reach them."""

    name = "redraw_attack"

    def __init__(self, context: MethodContext) -> None:
        super().__init__(context)
        self.notes = [f"seed={context.seed}", f"options={sorted(context.options)}"]

    def trace(self) -> list[str]:
        return list(self.notes)

    def run(self, episode: Any) -> None:
        import ctypes
        import os
        import subprocess
        import tempfile

        from cowp_ros.bench.annotations import DEFAULT_DIR, load_annotations
        from cowp_ros.bench.dataset import SituationDataset
        from cowp_ros.llm.evaluation import default_dataset_dir

        judge = DEFAULT_DIR / "eat_burger.yaml"
        kept = next((DEFAULT_DIR.parent / "results").rglob("trials.tar.xz"))
        link = Path(tempfile.mkdtemp()) / "innocent.yaml"
        planner = str(WORKER)  # a planner may run, on a file of the judge's never

        def through_a_link() -> object:
            os.symlink(judge, link)
            return link.read_text()

        def by_dir_fd() -> object:
            folder = os.open(DEFAULT_DIR.parent, os.O_RDONLY)
            return os.open("annotations/eat_burger.yaml", os.O_RDONLY, dir_fd=folder)

        attacks = {
            "judge": lambda: load_annotations(),
            "judge_open": lambda: judge.read_text(),
            "judge_link": through_a_link,
            "judge_dir_fd": by_dir_fd,
            "judge_cat": lambda: subprocess.run(["cat", str(judge)], check=True),
            "judge_python": lambda: subprocess.run([sys.executable, "-c", f"open({str(judge)!r})"]),
            "judge_planner": lambda: subprocess.run([sys.executable, planner, judge, judge]),
            "judge_libc": lambda: ctypes.CDLL(None).open,
            "dataset": lambda: SituationDataset.load(default_dataset_dir()),
            "kept_records": lambda: kept.read_bytes(),
            "runner_memory": lambda: Path(f"/proc/{os.getppid()}/environ").read_bytes(),
        }
        for label, attack in attacks.items():
            try:
                attack()
                self.notes.append(f"{label}: READ")
            except Exception as err:
                self.notes.append(f"{label}: {type(err).__name__}: {err}")
        episode.give_up("attacks tried")


def test_a_method_can_neither_redraw_the_schedule_nor_read_the_judge_or_the_dataset() -> None:
    from bench_fixtures import ANNOTATIONS, DATASET

    from cowp_ros.bench.annotations import load_annotations
    from cowp_ros.bench.dataset import SituationDataset
    from cowp_ros.bench.runner import BenchSettings, draw_trial
    from cowp_ros.tasks import get_task

    spec, planner = get_task("eat_burger"), make_planner("pyperplan")
    dataset, annotation = SituationDataset.load(DATASET), load_annotations(ANNOTATIONS)
    settings = BenchSettings(dataset=str(DATASET), p=0.3, seed=0)
    trial = draw_trial(spec, 5, settings, dataset, annotation["eat_burger"], planner)
    assert trial.events, "eat_burger-0005 at p=0.3 has situations to redraw"
    record = run_one(RedrawAttack, spec, trial, annotation["eat_burger"], planner, None)
    notes = record["trace"]
    assert notes[1] == "options=[]", notes  # no path, no dataset, no judge
    seed = int(notes[0].removeprefix("seed="))
    assert seed != trial.seed
    for line in notes[2:]:
        assert "SealedPathError" in line, line
    assert len(notes) == 13 and not record["completed"]

    # With the draw seed the re-draw would have worked (the audit's attack); with the
    # seed the method gets, it draws another trial.
    def redraw(seed: int) -> tuple[object, ...]:
        drawn = draw_trial(
            spec, 5, settings, dataset, annotation["eat_burger"], planner, draw_seed=seed
        )
        return (drawn.problem.problem_object_names, drawn.events)

    assert redraw(trial.seed) == (trial.problem.problem_object_names, trial.events)
    assert redraw(seed) != redraw(trial.seed)
