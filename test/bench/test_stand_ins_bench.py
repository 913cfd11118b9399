"""`benchmarks/bench_stand_ins.py`: the role question over a task's judge file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from bench_fixtures import ANNOTATIONS

from cowp_ros.bench.annotations import load_annotation
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.tasks import get_task

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_stand_ins.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_stand_ins", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_role_and_candidate_is_judged_against_the_judge_file() -> None:
    bench = load_script()
    # a model that is sure only of the mug in the cup's role, and unsure of the bowl
    model = ScriptedModel(
        yes_no=[(r"^Can a mug be used instead of the cup", 0.97), (r"^Can a bowl .* cup", 0.6)],
        default_yes_no=False,
    )
    rows = bench.judge_task(
        model, get_task("fill_cup"), load_annotation(ANNOTATIONS / "fill_cup.yaml")
    )
    cup = {r.candidate: r for r in rows if r.role == "cup"}
    assert cup["mug"].acceptable and cup["mug"].accepted and cup["mug"].p_yes == 0.97
    assert cup["bowl"].acceptable and not cup["bowl"].accepted  # 0.6 < ROLE_THRESHOLD
    assert {r.role for r in rows} >= {"cup", "faucet"}
    assert not any(r.accepted for r in rows if r.candidate not in ("mug",))
    # every question was the role question alone, once per (role, candidate)
    assert len(model.questions()) == len(rows)
    assert all(q.startswith("Can a") or q.startswith("Can an") for q in model.questions())
    lines = bench.summary(rows, "dev")
    assert lines[0].startswith("dev: ") and "passed at the deployed threshold" in lines[0]
    assert 0.0 <= bench.auc(*bench.scored(rows)) <= 1.0


def test_the_threshold_is_chosen_where_acceptable_and_unacceptable_part_most() -> None:
    bench = load_script()

    def row(p: float, ok: bool):  # type: ignore[no-untyped-def]
        return bench.Judged("fill_cup", "cup", f"k{p}", ok, p, False)

    rows = [row(0.97, True), row(0.93, True), row(0.91, False), row(0.8, False), row(0.6, True)]
    # at 0.92 two of three acceptable pass and no unacceptable one (J = 2/3), the best of
    # the reported thresholds; 0.94 passes one acceptable only
    assert bench.choose(rows) == 0.92
    assert bench.choose([row(0.9, True), row(0.7, False)]) == 0.9  # ties go to the higher
    assert set(bench.THRESHOLDS) >= {bench.choose(rows)}
