"""The paraphrase sets: every canonical sentence is one the method is measured or tuned
on, every label is the judge files' decision, and a malformed entry names its line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from bench_fixtures import DATASET, REPO

from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.paraphrases import (
    REWORDING_KINDS,
    CanonicalSources,
    ParaphraseSet,
    load_paraphrases,
    parse_paraphrases,
    read_near_misses,
)
from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.calibration.situations import load_benign_situations
from cowp_ros.tasks import split_tasks

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_grounded_thresholds import NEAR_MISSES, split_items
from bench_paraphrases import AGAIN, PARAPHRASES, Decided, summarise

needs_dataset = pytest.mark.skipif(
    not (DATASET / "situations.json").is_file(), reason="the public dataset is not here"
)


def loaded(split: str) -> ParaphraseSet:
    return load_paraphrases(PARAPHRASES[split])


@pytest.mark.parametrize("split", ["dev", "test"])
def test_each_file_holds_its_own_splits_tasks_with_both_decisions(split: str) -> None:
    paraphrases = loaded(split)
    assert paraphrases.split == split
    assert {g.task for g in paraphrases.groups} == set(split_tasks()[split])
    assert {g.blocks for g in paraphrases.groups} == {True, False}
    assert all(3 <= len(g.rewordings) <= 5 for g in paraphrases.groups)
    # Every kind of rewording is there, blocking and harmless sentences reworded alike.
    assert set(paraphrases.kinds()) == set(REWORDING_KINDS)
    for blocks in (True, False):
        kinds = {r.kind for g in paraphrases.groups if g.blocks is blocks for r in g.rewordings}
        assert {"verb", "voice", "length"} <= kinds


def test_the_dev_set_covers_at_least_forty_canonical_sentences() -> None:
    groups = loaded("dev").groups
    assert len(groups) >= 40
    assert sum(g.blocks for g in groups) >= 20 and sum(not g.blocks for g in groups) >= 15


def test_no_rewording_is_shared_between_dev_and_test() -> None:
    dev = {r.text.lower() for g in loaded("dev").groups for r in g.rewordings}
    test = {r.text.lower() for g in loaded("test").groups for r in g.rewordings}
    assert not dev & test


@needs_dataset
@pytest.mark.parametrize("split", ["dev", "test"])
def test_every_canonical_sentence_exists_and_its_label_is_the_judge_files(split: str) -> None:
    paraphrases = loaded(split)
    sources = CanonicalSources(
        SituationDataset.load(DATASET),
        load_benign_situations("all"),
        read_near_misses(NEAR_MISSES["dev"]),
    )
    _, items = split_items(split, str(DATASET))
    judged: dict[tuple[str, str], set[bool]] = {}
    for item in items:
        judged.setdefault((item.task, item.text), set()).add(item.blocking)
    for group in paraphrases.groups:
        canonical = sources.resolve(group, paraphrases.source)
        labels = judged.get((group.task, canonical.text))
        assert labels is not None, f"line {group.line}: {canonical.text!r} is not a {split} item"
        assert labels == {group.blocks}, f"line {group.line}: {canonical.text!r} is {labels}"
        # A rewording is new words, never a sentence of the set the method is measured on.
        for rewording in group.rewordings:
            assert (group.task, rewording.text) not in judged, rewording.text


@needs_dataset
def test_a_canonical_sentence_missing_from_its_source_is_refused_with_its_line() -> None:
    text = (
        "split: dev\ngroups:\n"
        "  - task: fill_cup\n    canonical: {near_miss: the cup is blue and green}\n"
        "    object: cup\n    blocks: false\n    rewordings:\n"
        "      - {kind: verb, text: the cup has two colours}\n"
    )
    group = parse_paraphrases(text, "mine.yaml").groups[0]
    sources = CanonicalSources(SituationDataset.load(DATASET), load_benign_situations("all"), ())
    with pytest.raises(CowpError, match=r"mine.yaml, line 3: 'the cup is blue and green'"):
        sources.resolve(group, "mine.yaml")


GOOD = """split: dev
groups:
  - task: fill_cup
    canonical: {dataset: 0}
    object: cup
    blocks: true
    rewordings:
      - {kind: verb, text: the cup has shattered}
      - {kind: voice, text: someone broke the cup}
"""


def test_a_well_formed_file_is_read_with_lines_and_kinds() -> None:
    paraphrases = parse_paraphrases(GOOD, "good.yaml")
    (group,) = paraphrases.groups
    assert (group.task, group.source, group.ref, group.blocks, group.line) == (
        "fill_cup",
        "dataset",
        "0",
        True,
        3,
    )
    assert [(r.kind, r.line) for r in group.rewordings] == [("verb", 8), ("voice", 9)]
    assert paraphrases.kinds() == {"verb": 1, "voice": 1}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (GOOD.replace("kind: voice", "kind: synonym"), r"line 9: unknown rewording kind 'synonym'"),
        (
            GOOD.replace("someone broke the cup", "someone, in a hurry, broke the cup"),
            r"line 9: a rewording has unknown key\(s\) broke the cup, in a hurry"
            r".*\n.*quote a sentence",
        ),
        (GOOD.replace("blocks: true", "blocks: yes please"), r"line 3: blocks must be true or"),
        (GOOD.replace("    object: cup\n", ""), r"line 3: a group needs object"),
        (GOOD.replace("task: fill_cup", "task: pour_coke"), r"line 3: task pour_coke is not a dev"),
        (GOOD.replace("{dataset: 0}", "{dataset: -2}"), r"line 3: dataset: must be a situation"),
        (GOOD.replace("{dataset: 0}", "{crowd: 0}"), r"line 3: unknown canonical source 'crowd'"),
        (
            GOOD.replace("someone broke the cup", "The cup has  shattered"),
            r"line 9: 'fill_cup:the cup has shattered' is already at line 8",
        ),
        (GOOD.replace("split: dev", "split: train"), r"split must be one of dev, test"),
        ("- just a list\n", r"must map split: and groups:"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_file_and_line(broken: str, message: str) -> None:
    with pytest.raises(CowpError, match=message) as raised:
        parse_paraphrases(broken, "mine.yaml")
    assert str(raised.value).startswith("mine.yaml")


def decided(kind: str, group: int, label: bool, blocks: bool | None) -> Decided:
    return Decided("fill_cup", group, kind, f"{kind} {group}", "find_cup", label, blocks, 1, 0.5)


def test_the_summary_counts_flips_against_the_canonical_decision_not_the_label() -> None:
    items = [
        decided("canonical", 1, True, True),  # right
        decided("verb", 1, True, False),  # flips, wrong
        decided("voice", 1, True, True),
        decided("canonical", 2, False, True),  # a false alarm
        decided("verb", 2, False, False),  # flips, and is right
        decided("verb", 2, False, True),  # same as its canonical, wrong
        decided("length", 2, False, None),  # failed: counted as an error only
        decided(AGAIN, 1, True, True),  # the same words, the same decision
        decided(AGAIN, 2, False, False),  # the same words flip: drift near the cut
    ]
    summary = summarise(items)
    verb = summary["kinds"]["verb"]
    assert verb["rewordings"] == 3
    assert verb["flip_rate"]["pct"] == pytest.approx(66.7)
    assert (verb["flips_blocking_to_harmless"], verb["flips_harmless_to_blocking"]) == (2, 0)
    assert verb["accuracy"]["pct"] == pytest.approx(33.3)
    assert verb["canonical_accuracy"]["pct"] == pytest.approx(33.3)  # 1 of the 3 bases
    assert summary["kinds"]["all"]["rewordings"] == 4
    assert summary["canonical"]["accuracy"]["pct"] == 50.0
    assert summary["errors"] == 1
    assert "length" not in summary["kinds"]
    again = summary["kinds"][AGAIN]
    assert again["rewordings"] == 2 and again["flip_rate"]["pct"] == 50.0


def test_the_packaged_file_paths_are_the_split_files() -> None:
    assert {split: Path(p).name for split, p in PARAPHRASES.items()} == {
        "dev": "dev.yaml",
        "test": "test.yaml",
    }
