"""Every script in benchmarks/ runs in CI in its smoke mode (`--smoke`), so none can rot.

A smoke run is the script's own path end to end on the smallest input, with the scripted
model server for a language model (never cached: the answer cache is not touched);
its figures are not asserted (they mean nothing), only that it ran, printed its table
and wrote what it writes. A script added to
benchmarks/ without a smoke run here fails `test_every_script_has_a_smoke_run`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
HELPERS: set[str] = set()


def smoke(script: str, tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke", *extra],
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return done.stdout


def test_every_script_has_a_smoke_run() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("*.py")} - HELPERS
    tested = {name for name in globals() if name.startswith("test_bench_")}
    assert {f"test_{Path(s).stem}" for s in scripts} <= tested


def test_bench_grasp(tmp_path: Path) -> None:
    out = smoke("bench_grasp.py", tmp_path, "--json", "grasp.json", "--plot", "grasp.png")
    assert out.splitlines()[-1].startswith("grasp success: ")
    assert "(fixed poses: " in out.splitlines()[-1]
    assert json.loads((tmp_path / "grasp.json").read_text())["trials"]
    assert (tmp_path / "grasp.png").stat().st_size > 0


def test_bench_physics(tmp_path: Path) -> None:
    out = smoke("bench_physics.py", tmp_path)
    assert "stepping alone: real-time factor" in out


def test_bench_replanning(tmp_path: Path) -> None:
    out = smoke("bench_replanning.py", tmp_path, "--json", "timings.json")
    assert "ALL            pyperplan" in out and (tmp_path / "timings.json").is_file()


def test_bench_replanning_on_a_domain_without_thing(tmp_path: Path) -> None:
    registry = REPO / "test" / "data" / "typed_domain"
    out = smoke("bench_replanning.py", tmp_path, env={"COWP_PDDL_DIR": str(registry)})
    assert "water_bed" in out


def test_bench_ipc(tmp_path: Path) -> None:
    from cowp_ros.planning.fast_downward import is_available

    if not is_available():  # its wheel's package imports unified-planning: never imported
        pytest.skip("Fast Downward is not installed")
    sys.path.insert(0, str(BENCHMARKS))
    from bench_ipc import pddl_package_root

    if not pddl_package_root().is_dir():
        pytest.skip("the IPC problems are not unpacked (make setup)")
    out = smoke("bench_ipc.py", tmp_path, "--json", "ipc.json")
    assert "childsnack/p01.pddl" in out and "planned (4 steps" in out
    assert "NOT planned: cowp plan: error:" in out and "line 34: (<= ...)" in out
    assert "summary: 1 of the 1 problems Fast Downward solves planned by cowp plan" in out
    record = json.loads((tmp_path / "ipc.json").read_text())
    assert [p["cowp"]["planned"] for p in record["problems"]] == [True, False]


def test_bench_stand_ins(tmp_path: Path) -> None:
    out = smoke("bench_stand_ins.py", tmp_path, "--plot", "roc.png")
    assert "dev:" in out and "test:" in out and (tmp_path / "roc.png").is_file()


def test_bench_llm_guided(tmp_path: Path) -> None:
    out = smoke("bench_llm_guided.py", tmp_path, "--figure", "g.png", "--json", "g.json")
    assert "llm_guided beam=1" in out and (tmp_path / "g.png").is_file()


def test_bench_detector(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the perception extra is not installed")
    out = smoke("bench_detector.py", tmp_path, "--json", "d.json")
    assert "| onnxruntime | 320 |" in out and (tmp_path / "d.json").is_file()


def test_bench_detector_sentences(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the perception extra is not installed")
    out = smoke("bench_detector_sentences.py", tmp_path, "--json", "s.json")
    # The old rules' false "occupied" and "missing" on these photos are gone.
    assert "false reports where none is right: none" in out
    saved = json.loads((tmp_path / "s.json").read_text())
    said = {case["id"]: case["said"] for case in saved["cases"] if not case["skipped"]}
    assert said["man_and_tie"] == [] and said["cat_photo"] == []
    assert said["no_cup_three_views"] == ["the cup is missing"]


@pytest.mark.ros
@pytest.mark.slow
def test_bench_graph(tmp_path: Path) -> None:
    out = smoke("bench_graph.py", tmp_path)
    assert "outcomes: completed" in out


def test_bench_step_mapping(tmp_path: Path) -> None:
    out = smoke("bench_step_mapping.py", tmp_path)
    assert "all-MiniLM-L6-v2" in out and "/2 =" in out


def test_bench_step_questions(tmp_path: Path) -> None:
    out = smoke(
        "bench_step_questions.py", tmp_path, "--pending", "--anchors", "--json", "steps.json"
    )
    assert "object items, all:" in out and (tmp_path / "steps.json").is_file()


def test_bench_grounded_thresholds(tmp_path: Path) -> None:
    out = smoke(
        "bench_grounded_thresholds.py", tmp_path, "--json", "items.json", "--plot", "rel.png"
    )
    assert '"split": "dev"' in out and (tmp_path / "items.json").is_file()
    assert (tmp_path / "rel.png").stat().st_size > 0


@pytest.mark.ros
def test_bench_decision_time(tmp_path: Path) -> None:
    out = smoke(
        "bench_decision_time.py", tmp_path, "--json", "times.json",
        env={"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
    )  # fmt: skip
    assert '"source": "cowp run"' in out and '"source": "commonsense node"' in out
    summary = json.loads(out)
    assert summary["prompt_speed"]["prefix"] > 0 and summary["prompt_speed"]["question"] > 0
    decided = [s[kind] for s in summary["sources"] for kind in ("harmless", "blocking")]
    assert any(decided) and all(
        "/" in line["within_target"] and len(line["within_target_interval_pct"]) == 2
        for line in decided
        if line
    )
    timed = json.loads((tmp_path / "times.json").read_text())
    assert {t["source"] for t in timed} == {"cowp run", "commonsense node"}
    assert all(not t["error"] for t in timed)
    assert any(t["questions"] >= 1 for t in timed)
    # Both were given their plan first and asked what its objects need.
    assert {t["source"] for t in timed if t["ahead"]} == {"cowp run", "commonsense node"}


@pytest.mark.ros
def test_bench_decision_time_first_step(tmp_path: Path) -> None:
    """The situation right after the plan: each item on the graph in both orders (on a
    node of its own each time), and in cowp run, every one with questions asked ahead."""
    out = smoke(
        "bench_decision_time.py", tmp_path, "--first-step", "--json", "first.json",
        env={"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
    )  # fmt: skip
    summary = json.loads(out)
    assert [s["source"] for s in summary["sources"]] == [
        "graph, decisions first",
        "graph, arrival order",
        "cowp run",
    ]
    timed = json.loads((tmp_path / "first.json").read_text())
    assert len(timed) == 6 and all(not t["error"] and t["ahead"] for t in timed)
    by_source = {t["source"]: [] for t in timed}
    for t in timed:
        by_source[t["source"]].append((t["scenario"], t["text"], t["questions"], t["blocks"]))
    # The same decisions whatever the order: only when they are made differs.
    assert len({tuple(sorted(items)) for items in by_source.values()}) == 1


def test_bench_question_cost(tmp_path: Path) -> None:
    out = smoke("bench_question_cost.py", tmp_path, "--json", "cost.json")
    summary = json.loads(out[out.index("{") :])
    # Two questions a decision as the monitor asks them, one in the joint form, the two
    # again as plain text, each with the tokens its server read.
    assert summary["shipped"]["questions"] == 2 and summary["joint"]["questions"] == 1
    assert summary["plain"]["questions"] == 2
    items = json.loads((tmp_path / "cost.json").read_text())["items"]
    assert items and all(len(i["shipped"]) == 2 and len(i["joint"]) == 1 for i in items)
    assert all(len(i["plain"]) == 2 for i in items)
    assert all(a["tokens"] > 0 for i in items for a in [*i["shipped"], *i["plain"]])
    # Every plain answer is read as a score, not lost in the other layout.
    assert all(i["plain"][0]["use"] is not None for i in items)


def test_bench_question_cost_asks_the_forms_given_beside_busy_cores(tmp_path: Path) -> None:
    out = smoke(
        "bench_question_cost.py", tmp_path, "--forms", "shipped", "--busy", "1", "--busy-nice", "10"
    )
    summary = json.loads(out[out.index("{") :])
    assert summary["busy"] == 1 and summary["busy_nice"] == 10
    assert summary["shipped"]["questions"] == 2
    assert "joint" not in summary and "plain" not in summary


def test_bench_grounded_figures(tmp_path: Path) -> None:
    out = smoke("bench_grounded_figures.py", tmp_path)
    assert '"method": "grounded"' in out and '"vs_cw"' in out


@pytest.mark.ros
def test_bench_executors(tmp_path: Path) -> None:
    out = smoke("bench_executors.py", tmp_path, "--json", "runs.json", "--plot", "e.png")
    assert "CPU ratio rclpy / steady" in out
    assert (tmp_path / "runs.json").is_file() and (tmp_path / "e.png").is_file()


def test_bench_paraphrases(tmp_path: Path) -> None:
    out = smoke("bench_paraphrases.py", tmp_path, "--json", "paraphrases.json", "--again")
    assert out.splitlines()[-1].startswith("paraphrases dev: 8 rewordings of 2 canonical")
    assert "| all | 8 |" in out
    kept = json.loads((tmp_path / "paraphrases.json").read_text())
    assert "bench_paraphrases.py --smoke" in kept["command"] and kept["commit"]
    assert kept["settings"]["file"].endswith("grounded.yaml") and "restate" in kept["settings"]
    assert kept["split"] == "dev" and len(kept["items"]) == 12  # 2 canonical asked again
    assert "| canonical_again | 2 |" in out
    assert {i["kind"] for i in kept["items"]} >= {"canonical", "verb", "failed_action"}
    assert all(i["blocks"] is not None for i in kept["items"])
    # each decision keeps its questions' scores, so other thresholds can be read off
    assert all(len(i["scores"]) == i["questions"] > 0 for i in kept["items"])
    assert {kind for i in kept["items"] for kind in i["scores"]} >= {"question", "state question"}


def test_bench_paraphrases_restating_as_the_canonical_sentence_is_a_labelled_stand_in(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "grounded.yaml"
    settings.write_text("models:\n  default: {restate: true, world_threshold: 2.0}\n")
    smoke(
        "bench_paraphrases.py",
        tmp_path,
        "--restate-as-canonical",
        "--json",
        "stand_in.json",
        env={"COWP_GROUNDED_CONFIG": str(settings)},
    )
    kept = json.loads((tmp_path / "stand_in.json").read_text())
    assert kept["restatements"].startswith("STAND-IN") and kept["settings"]["restate"] is True
    canonical = {i["group"]: i["text"] for i in kept["items"] if i["kind"] == "canonical"}
    about_objects = [i for i in kept["items"] if "question" in i["scores"]]
    assert len(about_objects) >= 8
    for item in about_objects:  # every object decision read its group's canonical state
        assert item["restated"].lower() == canonical[item["group"]].rstrip(".").lower()


def test_bench_question_views(tmp_path: Path) -> None:
    out = smoke("bench_question_views.py", tmp_path, "--json", "views.json")
    assert out.splitlines()[-1].startswith("question views dev, prefix shipped: ")
    kept = json.loads((tmp_path / "views.json").read_text())
    assert "bench_question_views.py --smoke" in kept["command"] and kept["commit"]
    assert {i["kind"] for i in kept["items"]} >= {"canonical", "verb", "scenario"}
    viewed = [i for i in kept["items"] if i["scores"]]
    assert viewed and all(
        set(i["scores"]) == {"use", "dirty", "use_step", "use_restated", "dirty_restated"}
        for i in viewed
    )
    assert len(kept["rows"]) == 5 and "at the configured thresholds" in kept["rows"][0]["way"]
    again = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_question_views.py"), "--from-json", "views.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.splitlines()[:7] == out.splitlines()[-8:-1]  # the same table, no model
