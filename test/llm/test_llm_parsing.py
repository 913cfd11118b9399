"""Answer parsing, GGUF headers, the check set and the GPT-3 answer parser: no model."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from cowp_ros.errors import CowpError
from cowp_ros.llm.completion import TokenLogprob, match_option, p_yes, parse_yes_no
from cowp_ros.llm.evaluation import (
    default_dataset_dir,
    load_checkset,
    load_gpt3_sample,
    parse_gpt3_answers,
    percentile,
)
from cowp_ros.llm.model_store import read_gguf_header


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", True),
        ("yes.", True),
        ("No", False),
        ("no, it is not suitable for a robot to turn on a faucet if it is broken", False),
        ("It is not suitable.", False),
        ("It is suitable.", True),
        ("I cannot tell", None),
        ("", None),
        ("Nothing", None),
    ],
)
def test_parse_yes_no_reads_the_first_verdict_word(text: str, expected: bool | None) -> None:
    assert parse_yes_no(text) is expected


def test_p_yes_sums_token_variants_and_normalises() -> None:
    pairs = [(" Yes", math.log(0.3)), ("yes", math.log(0.1)), ("No", math.log(0.4)), ("The", -1)]
    top = [TokenLogprob(token, logprob) for token, logprob in pairs]
    assert p_yes(top) == pytest.approx(0.4 / 0.8)


def test_p_yes_is_none_when_neither_word_is_among_the_alternatives() -> None:
    assert p_yes([TokenLogprob("The", -0.1), TokenLogprob("It", -2.0)]) is None
    assert p_yes([]) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mug", 1),
        ("Mug.", 1),
        ("2", 1),
        ("A drinking glass is best, not a mug", 2),
        ("glass", None),
        ("a broom", None),
    ],
)
def test_match_option(text: str, expected: int | None) -> None:
    assert match_option(text, ["fork", "mug", "drinking glass", "plate"]) == expected


def test_match_option_prefers_the_longer_option_at_the_same_place() -> None:
    assert match_option("coffee cup", ["coffee", "coffee cup"]) == 1


def _write_gguf(path: Path, metadata: dict[str, str], magic: bytes = b"GGUF") -> None:
    def string(text: str) -> bytes:
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    body = magic + struct.pack("<IQQ", 3, 0, len(metadata) + 1)
    for key, value in metadata.items():
        body += string(key) + struct.pack("<I", 8) + string(value)
    body += string("tokenizer.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 1, 2, 3)
    path.write_bytes(body + b"\0" * 32)


def test_gguf_header_is_read_without_third_party_code(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    _write_gguf(model, {"general.architecture": "qwen2", "general.name": "Tiny"})
    info = read_gguf_header(model)
    assert (info.architecture, info.general_name, info.version) == ("qwen2", "Tiny", 3)
    assert info.metadata["tokenizer.scores"] == "<array of 3>"


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "m.gguf"
    _write_gguf(bogus, {"general.architecture": "qwen2"}, magic=b"PK\x03\x04")
    with pytest.raises(CowpError, match="not a GGUF file"):
        read_gguf_header(bogus)
    truncated = tmp_path / "t.gguf"
    truncated.write_bytes(b"GGUF\x03\x00")
    with pytest.raises(CowpError, match="truncated"):
        read_gguf_header(truncated)


def test_checkset_has_every_kind_with_both_answers() -> None:
    items = load_checkset()
    assert len(items) >= 40
    kinds = {item.kind for item in items}
    assert kinds == {"monitor", "acquirer", "selection"}
    monitor = [item.expect for item in items if item.kind == "monitor"]
    assert True in monitor and False in monitor  # benign and blocking situations
    for item in items:
        if item.kind == "selection":
            assert item.expect in item.options


def test_checkset_rejects_an_answer_outside_the_options(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("selection:\n  - {q: 'Pick', options: [a, b], expect: c}\n")
    with pytest.raises(CowpError, match="not in its options"):
        load_checkset(bad)


GPT3_SAMPLE = """raw prompt:is it suitable that a robot turns on a faucet if the faucet is broken?
no, it is not suitable for a robot to turn on a faucet if the faucet is broken
raw prompt:is it suitable that a robot turns on a mat?
yes
raw prompt:there are some objects, such as measuring cup, dish rack. which is the most \
suitable to replace a faucet in the task of drinking water if the faucet is broken?
a measuring cup is the most suitable object to replace a faucet
raw prompt:there are some objects, such as mat, sponge. which is the most suitable to \
replace a vacuum in the task of cleaning floor if the vacuum is missing?
a broom would be best
prompt (raw):can a kettle make a faucet not broken if the faucet is broken?
no
"""


def test_gpt3_answers_are_parsed_and_uncomparable_ones_dropped() -> None:
    items = parse_gpt3_answers(GPT3_SAMPLE)
    assert [(i.kind, i.expect) for i in items] == [
        ("gpt3-yes-no", False),
        ("gpt3-yes-no", True),
        ("gpt3-choice", "measuring cup"),
    ]
    assert items[2].options == ("measuring cup", "dish rack")


def test_gpt3_sample_is_reproducible(tmp_path: Path) -> None:
    (tmp_path / "experience_task_4.txt").write_text(GPT3_SAMPLE)
    first, pool = load_gpt3_sample(tmp_path, sample=2, seed=3)
    again, _ = load_gpt3_sample(tmp_path, sample=2, seed=3)
    assert pool == 3 and first == again and len(first) == 2


def test_the_public_dataset_parses_when_present() -> None:
    directory = default_dataset_dir() / "gpt3_answers"
    if not directory.is_dir():
        pytest.skip(f"COWP dataset not at {directory}")
    items, pool = load_gpt3_sample(directory, sample=60, seed=0)
    assert len(items) == 60 and pool > 500
    assert {item.kind for item in items} <= {"gpt3-yes-no", "gpt3-choice"}


def test_percentile_is_nearest_rank() -> None:
    assert percentile([float(v) for v in range(1, 21)], 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0


def test_deeply_nested_gguf_arrays_are_refused_not_a_recursion_error(tmp_path: Path) -> None:
    levels = 5000  # each an array of one array: 12 bytes a level
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    key = b"evil.nesting"
    body += struct.pack("<Q", len(key)) + key + struct.pack("<I", 9)
    body += struct.pack("<IQ", 9, 1) * levels + struct.pack("<IQ", 4, 0)
    model = tmp_path / "nested.gguf"
    model.write_bytes(body + b"\0" * 32)
    with pytest.raises(CowpError, match="not a valid GGUF file"):
        read_gguf_header(model)


def test_an_absurd_array_of_strings_is_refused(tmp_path: Path) -> None:
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    key = b"tokenizer.tokens"
    body += struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 8, 2**62)
    model = tmp_path / "huge.gguf"
    model.write_bytes(body + b"\0" * 32)
    with pytest.raises(CowpError, match="not a valid GGUF file"):
        read_gguf_header(model)
