"""`cowp bench` end to end through the real CLI: table, plots, resume, evidence, checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench_fixtures import DATASET

from cowp_ros.bench.runner import BENCH_VERSION
from cowp_ros.cli import main
from cowp_ros.llm.model_store import QWEN_1_5B

pytestmark = pytest.mark.skipif(
    not (DATASET / "situations.json").is_file(), reason="the public dataset is not here"
)


def bench(tmp_path: Path, *extra: str) -> int:
    return main(["bench", "--dataset", str(DATASET), "--out", str(tmp_path / "out"), *extra])


def test_a_run_without_llm_writes_results_table_and_plots_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(tmp_path, "--methods", "oracle,cw", "--trials", "2", "--p", "0.5") == 0
    out = tmp_path / "out"
    result = json.loads((out / "results.json").read_text())
    assert set(result["methods"]) == {"oracle", "cw"}
    assert result["settings"]["objects_present"] == [43]
    assert result["splits"]["test"] == ["plate_to_sink", "pour_coke", "eat_burger"]
    cw = result["methods"]["cw"]["overall"]
    assert cw["trials"] == 12 and cw["situations_drawn"] > 0 and cw["llm_calls"] == 0
    assert cw["completion_without_situation"]["pct"] in (None, 100.0)
    assert cw["handling"]["k"] == 0  # CW never changes its plan: 0 by construction
    assert result["methods"]["oracle"]["overall"]["handling_share_of_oracle"] in (None, 100.0)
    table = (out / "results.md").read_text()
    assert table.index("### Test tasks") < table.index("### Dev tasks") < table.index("### All")
    assert "| CW | 12 |" in table
    for plot in ("overall.png", "per_task.png", "per_object.png"):
        assert (out / plot).stat().st_size > 10_000
    assert len(list((out / "trials" / "oracle").glob("*.json"))) == 12
    capsys.readouterr()

    assert (
        bench(tmp_path, "--methods", "oracle,cw", "--trials", "3", "--p", "0.5", "--no-plots") == 0
    )
    err = capsys.readouterr().err
    assert "ran 12 (method, trial)" in err  # only the third trial of each task ran
    again = json.loads((out / "results.json").read_text())
    assert again["methods"]["cw"]["overall"]["trials"] == 18


def test_kept_evidence_rebuilds_the_same_table_from_the_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--methods", "oracle,cw", "--tasks", "pour_coke,fill_cup", "--trials", "3",
            "--protocol", "conference", "--no-plots"]  # fmt: skip
    assert bench(tmp_path, *args, "--archive") == 0
    out = tmp_path / "out"
    table = (out / "results.md").read_text()
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["command"].startswith("cowp ") and len(provenance["commit"]) == 40
    assert provenance["run_seconds"] > 0 and provenance["pairs_run"] == 12
    shutil.rmtree(out / "trials")
    (out / "results.md").unlink()
    assert bench(tmp_path, *args, "--report-only") == 0
    assert (out / "results.md").read_text() == table
    capsys.readouterr()
    assert (
        bench(tmp_path, *[a if a != "conference" else "journal" for a in args], "--report-only")
        == 1
    )
    assert "other settings (protocol)" in capsys.readouterr().err


def test_trials_of_an_older_bench_version_are_reported_never_mixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--methods", "cw", "--tasks", "pour_coke", "--trials", "1", "--no-plots"]
    assert bench(tmp_path, *args) == 0
    config = tmp_path / "out" / "config.json"
    saved = json.loads(config.read_text())
    assert saved["bench_version"] == BENCH_VERSION == 5
    del saved["bench_version"]  # as a run of bench v2 wrote it
    config.write_text(json.dumps(saved))
    capsys.readouterr()
    assert bench(tmp_path, *args, "--report-only") == 0
    captured = capsys.readouterr()
    assert "holds bench v2 trials" in captured.err and "would not reproduce them" in captured.err
    assert (tmp_path / "out" / "results.md").read_text().startswith("# cowp bench v2:")
    assert bench(tmp_path, *args) == 1  # running more into it would mix two versions
    assert "other settings (bench_version)" in capsys.readouterr().err


def test_the_conference_protocol_has_one_situation_a_trial(tmp_path: Path) -> None:
    assert bench(tmp_path, "--methods", "cw", "--trials", "4", "--protocol", "conference",
                 "--split", "test", "--no-plots") == 0  # fmt: skip
    paths = list((tmp_path / "out" / "trials" / "cw").glob("*.json"))
    assert {p.name.rsplit("-", 1)[0] for p in paths} == {"plate_to_sink", "pour_coke", "eat_burger"}
    for path in paths:
        assert len(json.loads(path.read_text())["situations"]) == 1


def test_trials_of_other_settings_are_not_mixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(tmp_path, "--methods", "cw", "--trials", "1", "--no-plots") == 0
    assert bench(tmp_path, "--methods", "cw", "--trials", "1", "--p", "0.3") == 1
    assert "other settings (p)" in capsys.readouterr().err


def test_sampled_answers_are_recorded_and_never_mixed_with_greedy_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--methods", "cw", "--tasks", "pour_coke", "--trials", "1", "--no-plots"]
    assert bench(tmp_path, *args, "--temperature", "0.7", "--sample-seed", "3") == 0
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert (config["temperature"], config["sample_seed"]) == (0.7, 3)
    table = (tmp_path / "out" / "results.md").read_text()
    assert "sampled answers (temperature 0.7, sample seed 3)" in table.splitlines()[0]
    capsys.readouterr()
    assert bench(tmp_path, *args) == 1
    assert "other settings (sample_seed, temperature)" in capsys.readouterr().err
    assert bench(tmp_path, *args, "--sample-seed", "3") == 1
    assert "--sample-seed needs --temperature" in capsys.readouterr().err
    assert bench(tmp_path, *args, "--temperature", "-1") == 1
    assert "temperature must be in (0, 2]" in capsys.readouterr().err


def test_distractors_are_raised_and_a_kept_plan_is_no_change(tmp_path: Path) -> None:
    sentences = tmp_path / "benign.txt"
    sentences.write_text("# benign\nthe cup is blue.\nit is sunny outside.\n")
    assert bench(
        tmp_path, "--methods", "cw", "--trials", "2", "--p", "0", "--no-plots",
        "--distractors", str(sentences), "--distractor-p", "0.5",
    ) == 0  # fmt: skip
    cw = json.loads((tmp_path / "out" / "results.json").read_text())["methods"]["cw"]["overall"]
    assert cw["distractors_changed"]["n"] > 0 and cw["distractors_changed"]["k"] == 0
    assert cw["completion"]["pct"] == 100.0


def test_distractors_tied_to_a_task_are_raised_only_in_it_and_at_their_step(
    tmp_path: Path,
) -> None:
    sentences = tmp_path / "benign.yaml"
    sentences.write_text(
        "- {text: the cup is blue, task: fill_cup, step: fill_cup}\n"
        "- {text: the cup has a flower pattern, task: fill_cup, step: hold_cup}\n"
        "- {text: the vacuum is red, task: clean_area, step: grasp_vacuum}\n"
    )
    assert bench(
        tmp_path, "--methods", "cw", "--tasks", "fill_cup,clean_area", "--trials", "3",
        "--p", "0", "--no-plots", "--distractors", str(sentences), "--distractor-p", "1",
    ) == 0  # fmt: skip
    out = tmp_path / "out"
    raised = {}
    for path in sorted((out / "trials" / "cw").glob("*.json")):
        record = json.loads(path.read_text())
        for d in record["distractors"]:
            raised.setdefault(record["task"], set()).add((d["text"], d["action"]))
    assert {text for text, _ in raised["clean_area"]} == {"the vacuum is red"}
    assert {text for text, _ in raised["fill_cup"]} == {
        "the cup is blue",
        "the cup has a flower pattern",
    }
    # at their own step when the plan has it; elsewhere either of the task's sentences
    assert ("the cup is blue", "fill_cup") in raised["fill_cup"]
    assert ("the cup has a flower pattern", "fill_cup") not in raised["fill_cup"]
    assert ("the cup is blue", "hold_cup") not in raised["fill_cup"]
    saved = json.loads((out / "config.json").read_text())["distractors"]
    assert saved[0] == {"text": "the cup is blue", "task": "fill_cup", "step": "fill_cup"}


def test_two_distractor_files_are_reported_apart(tmp_path: Path) -> None:
    ours = tmp_path / "ours.yaml"
    ours.write_text("- {text: the coke is red, task: pour_coke}\n")
    near = tmp_path / "near_miss.yaml"
    near.write_text("- {text: the glass is a tall one, task: pour_coke, kind: near_miss}\n")
    assert bench(
        tmp_path, "--methods", "cw", "--tasks", "pour_coke", "--trials", "2", "--p", "0",
        "--no-plots", "--distractors", f"{ours},{near}", "--distractor-p", "1",
    ) == 0  # fmt: skip
    out = tmp_path / "out"
    result = json.loads((out / "results.json").read_text())
    by_file = result["methods"]["cw"]["overall"]["distractors_changed_by_file"]
    assert set(by_file) == {"ours", "near_miss"}
    assert (
        by_file["ours"]["n"] + by_file["near_miss"]["n"]
        == (result["methods"]["cw"]["overall"]["distractors_changed"]["n"])
        > 0
    )
    assert by_file["near_miss"]["k"] == 0  # CW changes nothing for a sentence
    assert "distractors of near_miss: changed 0 [" in (out / "results.md").read_text()
    saved = json.loads((out / "config.json").read_text())["distractors"]
    assert {d["source"] for d in saved} == {"ours", "near_miss"}


def test_a_malformed_distractor_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sentences = tmp_path / "benign.yaml"
    sentences.write_text("text: not a list\n")
    assert bench(tmp_path, "--methods", "cw", "--distractors", str(sentences)) == 1
    assert "must hold a list of sentences" in capsys.readouterr().err


def test_unknown_methods_and_listing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert bench(tmp_path, "--methods", "cw,magic") == 1
    assert "known methods: " in capsys.readouterr().err
    assert main(["bench", "--list-methods"]) == 0
    listed = capsys.readouterr().out
    for name in ("oracle", "cowp", "cw", "ek"):
        assert name in listed


def test_pairs_lists_what_even_the_oracle_cannot_solve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(tmp_path, "--pairs", "--tasks", "pour_coke") == 0
    out = capsys.readouterr().out
    assert "pour_coke: " in out and "0 disagreement(s)" in out
    assert "unsolvable: pour_coke #11 'the robot cannot recognize the bottle" in out


@pytest.mark.llm
@pytest.mark.slow
def test_a_tiny_run_with_the_embedded_model(tmp_path: Path) -> None:
    # one trial of one task, no situations: every LLM method plans once with the real
    # embedded model (a minute on a cold answer cache, seconds once cached)
    if not QWEN_1_5B.path.is_file():
        pytest.fail(f"{QWEN_1_5B.path} missing: run 'make setup' (scripts/setup.d/llm_model.sh)")
    assert bench(
        tmp_path, "--tasks", "fill_cup", "--trials", "1", "--p", "0", "--no-plots",
        "--methods", "cowp,lmzsp,progprompt,inner_monologue",
    ) == 0  # fmt: skip
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    assert result["methods"]["cowp"]["overall"]["completion"]["pct"] == 100.0
    for name in ("lmzsp", "progprompt", "inner_monologue"):
        usage = result["methods"][name]["overall"]
        assert usage["llm_questions"] == usage["llm_calls"] + usage["cache_hits"] > 0
