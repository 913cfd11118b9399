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

METHODS_DIR = Path(registry.__file__).parent
JUDGE_MODULES = {
    "cowp_ros.bench.annotations",
    "cowp_ros.bench.runner",
    "cowp_ros.bench.results",
    "cowp_ros.bench.privileged",
    "cowp_ros.bench.solvability",
}
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


def test_no_method_but_the_oracle_imports_the_judge() -> None:
    modules = sorted(METHODS_DIR.glob("*.py"))
    assert len(modules) > 5
    for path in modules:
        if path.name == "oracle.py":
            continue
        # the protocol module names the oracle's access as a type, nothing more
        barred = (
            JUDGE_MODULES - {"cowp_ros.bench.privileged"}
            if path.name == "__init__.py"
            else JUDGE_MODULES
        )
        for module, names in _imports(path):
            assert module not in barred, f"{path.name} imports {module}"
            if module == "cowp_ros.bench.simulator":
                assert names <= ALLOWED_FROM_SIMULATOR, f"{path.name} imports {names}"
        assert "benchmarks/annotations" not in path.read_text(), path.name


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
