"""Fresh draws: the test tasks are scored only on a seed recorded before the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_fixtures import DATASET

from cowp_ros.bench.seeds import (
    REGISTRY,
    check_test_run,
    code_version,
    read_registry,
    register_seed,
)
from cowp_ros.cli import main
from cowp_ros.errors import CowpError


def test_a_registered_seed_is_large_random_and_recorded_with_the_code_version(
    tmp_path: Path,
) -> None:
    registry = tmp_path / "seeds.yaml"
    first = register_seed(["grounded"], "abc1234", "the v5 table", path=registry)
    second = register_seed(["grounded", "cowp"], "abc1234", path=registry)
    assert first.seed != second.seed and min(first.seed, second.seed) > 2**32
    assert first.code == code_version() and first.registered.endswith("Z")
    assert read_registry(registry) == [first, second]
    assert registry.read_text().startswith("# The seeds the test tasks were scored on")


def test_the_test_tasks_are_scored_only_on_a_seed_recorded_for_this_code(tmp_path: Path) -> None:
    registry = tmp_path / "seeds.yaml"
    entry = register_seed(["grounded"], "abc1234", path=registry)
    # references (the controls, the oracle, CW) are scored on any seed
    assert (
        check_test_run(7, ["oracle", "retry", "noun_only", "cw"], rerun=False, path=registry) == ""
    )
    with pytest.raises(CowpError, match="seed 7 is not registered") as err:
        check_test_run(7, ["oracle", "grounded"], rerun=False, path=registry)
    assert "--new-test-seed" in str(err.value)
    assert check_test_run(entry.seed, ["oracle", "grounded"], rerun=False, path=registry) == "fresh"
    # a method the seed was not drawn for has not been promised these draws
    with pytest.raises(CowpError, match="used for another version"):
        check_test_run(entry.seed, ["cowp"], rerun=False, path=registry)


def test_a_seed_used_for_an_earlier_version_is_refused_unless_a_rerun(tmp_path: Path) -> None:
    registry = tmp_path / "seeds.yaml"
    entry = register_seed(["grounded"], "abc1234", path=registry)
    text = registry.read_text().replace(entry.code, "0123456789abcdef")  # the code changed
    registry.write_text(text)
    with pytest.raises(CowpError, match="a new version is scored on a new seed"):
        check_test_run(entry.seed, ["grounded"], rerun=False, path=registry)
    assert check_test_run(entry.seed, ["grounded"], rerun=True, path=registry) == "re-run"


def test_the_code_version_follows_every_method_package(tmp_path: Path) -> None:
    for folder in ("bench/methods", "methods/grounded", "cowp"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    before = code_version(tmp_path)
    (tmp_path / "methods" / "grounded" / "a.py").write_text("x = 2\n")
    after = code_version(tmp_path)
    assert after != before
    (tmp_path / "bench" / "results.py").write_text("# not a method's code\n")
    assert code_version(tmp_path) == after


def test_the_kept_registry_records_seed_0_as_used() -> None:
    zero = [e for e in read_registry(REGISTRY) if e.seed == 0]
    assert zero and "grounded" in zero[0].methods
    with pytest.raises(CowpError, match="seed 0 was used"):
        check_test_run(0, ["grounded"], rerun=False)


def test_a_malformed_registry_is_a_clear_error(tmp_path: Path) -> None:
    registry = tmp_path / "seeds.yaml"
    registry.write_text("seeds:\n- seed: 3\n")
    with pytest.raises(CowpError, match="cannot read the seed registry") as err:
        read_registry(registry)
    assert "each entry under `seeds:` needs" in str(err.value)


@pytest.mark.skipif(not (DATASET / "situations.json").is_file(), reason="no dataset")
def test_cowp_bench_records_a_fresh_seed_and_scores_the_test_tasks_only_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = tmp_path / "seeds.yaml"
    base = ["bench", "--dataset", str(DATASET), "--seeds", str(registry), "--no-plots"]
    run = [*base, "--tasks", "pour_coke", "--trials", "1", "--p", "0", "--out"]
    # EK is developed against the tasks (not a reference) and needs no model
    assert main([*run, str(tmp_path / "a"), "--methods", "ek", "--seed", "5"]) == 1
    assert "seed 5 is not registered" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()  # refused before anything ran
    assert main([*base, "--new-test-seed", "--methods", "cw"]) == 1
    assert "references" in capsys.readouterr().err
    assert main([*base, "--new-test-seed", "--methods", "ek", "--note", "test"]) == 0
    seed = int(capsys.readouterr().out.strip().splitlines()[0])
    assert [e.seed for e in read_registry(registry)] == [seed]
    # scored on it: the three controls are added, and the header says the seed is fresh
    out = tmp_path / "b"
    assert main([*run, str(out), "--methods", "ek", "--seed", str(seed)]) == 0
    header = (out / "results.md").read_text().splitlines()[0]
    assert f"seed={seed} (fresh: recorded in benchmarks/seeds.yaml before the run)" in header
    result = json.loads((out / "results.json").read_text())
    assert result["settings"]["methods"] == ["ek", "retry", "same_kind", "noun_only"]
    assert json.loads((out / "config.json").read_text())["seed_standing"] == "fresh"
    # the table rebuilt from the evidence says so too
    again = [*run, str(out), "--methods", "ek,retry,same_kind,noun_only", "--seed", str(seed)]
    assert main([*again, "--report-only"]) == 0
    assert "(fresh:" in (out / "results.md").read_text().splitlines()[0]
    # the references alone are scored on any seed, and their header claims nothing
    assert main([*run, str(tmp_path / "c"), "--methods", "oracle,cw", "--seed", "5"]) == 0
    assert "fresh" not in (tmp_path / "c" / "results.md").read_text().splitlines()[0]
