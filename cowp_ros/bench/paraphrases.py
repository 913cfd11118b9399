"""Rewordings of the benchmark's situations, for measuring whether a decision holds when
the same situation is said in other words.

A method can score well on the dataset's own sentences and still decide by wording: the
same broken cup said as "the cup cannot hold anything any more" may pass where "the cup
is broken" blocks. The team wrote rewordings of the situations the method is tuned on
(the dev tasks) and, apart, of the test tasks' (reported only, never tuned on), before
any tuning (benchmarks/paraphrases/README.md says how). Each group names its canonical
sentence where it is kept, never a copy of the public dataset's text: a dataset
situation by its index, a benign distractor or a dev near miss by its text. Every
rewording carries the canonical sentence's decision, so a flip is a change of decision
that only the wording can explain.

The file is read strictly: a malformed entry is refused with the file and line, since a
typo in a kind or a label would otherwise become a silent error in the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.errors import CowpError
from cowp_ros.methods.paper.calibration.situations import CalibrationItem
from cowp_ros.tasks import get_task, split_tasks

REWORDING_KINDS = (
    "verb",
    "failed_action",
    "contents_list",
    "voice",
    "length",
    "cause_elsewhere",
)
"""How a rewording differs from its canonical sentence: other verbs; a state said as an
action that cannot be done; contents listed without "occupied"; passive or active;
longer or shorter; the cause said elsewhere (the power cut, not the kettle dead)."""

CANONICAL_SOURCES = ("dataset", "benign", "near_miss")
"""Where a canonical sentence is kept: the public dataset (by situation index), the
calibration's benign situations, the team's dev near misses (both by text)."""

_LINE = "__line__"


@dataclass(frozen=True)
class Rewording:
    kind: str
    text: str
    line: int
    """Its line in the file, for messages about it."""


@dataclass(frozen=True)
class ParaphraseGroup:
    """One canonical sentence, the decision it should get, and its rewordings."""

    task: str
    source: str
    """One of `CANONICAL_SOURCES`."""
    ref: str
    """The dataset's situation_index (as text) or the sentence itself."""
    object: str
    """The kind of object the situation is about ("cup", "power")."""
    blocks: bool
    """The canonical sentence's decision (the judge files'): every rewording's label."""
    rewordings: tuple[Rewording, ...]
    line: int


@dataclass(frozen=True)
class ParaphraseSet:
    split: str
    groups: tuple[ParaphraseGroup, ...]
    source: str

    def kinds(self) -> dict[str, int]:
        """Rewordings per kind, in `REWORDING_KINDS` order (kinds with none left out)."""
        counts = {kind: 0 for kind in REWORDING_KINDS}
        for group in self.groups:
            for rewording in group.rewordings:
                counts[rewording.kind] += 1
        return {kind: n for kind, n in counts.items() if n}


class _LineLoader(yaml.SafeLoader):
    """PyYAML's safe loader that keeps each mapping's line, for messages that name it."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping[_LINE] = node.start_mark.line + 1
        return mapping


def load_paraphrases(path: Path) -> ParaphraseSet:
    """The paraphrase set in `path` (benchmarks/paraphrases/dev.yaml or test.yaml)."""
    try:
        text = path.read_text()
    except OSError as err:
        raise CowpError(f"cannot read the paraphrase file {path}: {err.strerror}") from err
    return parse_paraphrases(text, str(path))


def parse_paraphrases(text: str, source: str = "<text>") -> ParaphraseSet:
    """A paraphrase set from YAML (`split:` and `groups:`), checked entry by entry: every
    task in the registry and of the file's split, canonical references well formed, known
    kinds, no sentence twice."""
    try:
        data = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as err:
        raise CowpError(f"{source} is not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise CowpError(f"{source} must map split: and groups:, not hold {type(data).__name__}")
    _keys(data, {"split", "groups"}, {"split", "groups"}, source, "the file")
    split = data["split"]
    tasks = split_tasks()
    if split not in tasks:
        raise CowpError(f"{source}, line 1: split must be one of {', '.join(tasks)}, not {split!r}")
    raw_groups = data["groups"]
    if not isinstance(raw_groups, list) or not raw_groups:
        raise CowpError(f"{source}: groups must be a non-empty list")
    groups: list[ParaphraseGroup] = []
    seen: dict[str, int] = {}
    for raw in raw_groups:
        group = _group(raw, source, split, tasks[split])
        for line, sentence in [(group.line, f"{group.task}:{group.source}:{group.ref}")] + [
            (r.line, f"{group.task}:{r.text.lower()}") for r in group.rewordings
        ]:
            if sentence in seen:
                raise CowpError(
                    f"{source}, line {line}: {sentence!r} is already at line {seen[sentence]}"
                )
            seen[sentence] = line
        groups.append(group)
    return ParaphraseSet(str(split), tuple(groups), source)


def _keys(
    raw: Mapping[str, Any], required: set[str], allowed: set[str], source: str, what: str
) -> None:
    line = raw.get(_LINE, "?")
    keys = set(raw) - {_LINE}
    if missing := sorted(required - keys):
        raise CowpError(f"{source}, line {line}: {what} needs {', '.join(missing)}")
    if unknown := sorted(keys - allowed):
        raise CowpError(
            f"{source}, line {line}: {what} has unknown key(s) {', '.join(map(str, unknown))}",
            hint=f"use {', '.join(sorted(allowed))}; quote a sentence with a comma or colon "
            "(in {kind: K, text: T} a comma ends the text)",
        )


def _text(value: Any, source: str, line: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CowpError(
            f"{source}, line {line}: {what} must be a non-empty sentence, not {value!r}"
        )
    return " ".join(value.split())


def _group(raw: Any, source: str, split: str, split_task_names: Sequence[str]) -> ParaphraseGroup:
    if not isinstance(raw, dict):
        raise CowpError(f"{source}: each group must be a mapping, not {raw!r}")
    line = raw[_LINE]
    _keys(
        raw,
        {"task", "canonical", "object", "blocks", "rewordings"},
        {"task", "canonical", "object", "blocks", "rewordings"},
        source,
        "a group",
    )
    task = str(raw["task"])
    try:
        spec = get_task(task)
    except CowpError as err:
        raise CowpError(f"{source}, line {line}: {err.message}", hint=err.hint) from err
    if spec.name not in split_task_names:
        raise CowpError(
            f"{source}, line {line}: task {spec.name} is not a {split} task "
            f"(the {split} tasks: {', '.join(split_task_names)})"
        )
    canonical = raw["canonical"]
    if not isinstance(canonical, dict) or len(set(canonical) - {_LINE}) != 1:
        raise CowpError(
            f"{source}, line {line}: canonical must name one source, "
            f"{{dataset: N}}, {{benign: TEXT}} or {{near_miss: TEXT}}, not {canonical!r}"
        )
    (kind, value), *_ = [(k, v) for k, v in canonical.items() if k != _LINE]
    if kind not in CANONICAL_SOURCES:
        raise CowpError(
            f"{source}, line {line}: unknown canonical source {kind!r}",
            hint=f"use one of {', '.join(CANONICAL_SOURCES)}",
        )
    if kind == "dataset":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CowpError(
                f"{source}, line {line}: dataset: must be a situation index, not {value!r}"
            )
        ref = str(value)
    else:
        ref = _text(value, source, line, f"canonical {kind}")
    if not isinstance(raw["blocks"], bool):
        raise CowpError(
            f"{source}, line {line}: blocks must be true or false, not {raw['blocks']!r}"
        )
    rewordings = raw["rewordings"]
    if not isinstance(rewordings, list) or not rewordings:
        raise CowpError(f"{source}, line {line}: rewordings must be a non-empty list")
    return ParaphraseGroup(
        task=spec.name,
        source=kind,
        ref=ref,
        object=_text(raw["object"], source, line, "object"),
        blocks=raw["blocks"],
        rewordings=tuple(_rewording(r, source, line) for r in rewordings),
        line=line,
    )


def _rewording(raw: Any, source: str, group_line: int) -> Rewording:
    if not isinstance(raw, dict):
        raise CowpError(
            f"{source}, line {group_line}: each rewording must be {{kind: K, text: T}}, not {raw!r}"
        )
    line = raw[_LINE]
    _keys(raw, {"kind", "text"}, {"kind", "text"}, source, "a rewording")
    kind = raw["kind"]
    if kind not in REWORDING_KINDS:
        raise CowpError(
            f"{source}, line {line}: unknown rewording kind {kind!r}",
            hint=f"use one of {', '.join(REWORDING_KINDS)}",
        )
    return Rewording(str(kind), _text(raw["text"], source, line, "a rewording's text"), line)


@dataclass(frozen=True)
class NearMiss:
    task: str
    text: str
    step: str


def read_near_misses(path: Path) -> tuple[NearMiss, ...]:
    """The near misses of a distractor file (`- {text, task, step, kind}` a line), those
    that name their task and step (the canonical sentences a group may point at)."""
    try:
        raw = yaml.safe_load(path.read_text()) or []
    except (OSError, yaml.YAMLError) as err:
        raise CowpError(f"cannot read the near misses in {path}: {err}") from err
    if not isinstance(raw, list):
        raise CowpError(f"{path} must hold a list of near misses")
    return tuple(
        NearMiss(str(item["task"]), " ".join(str(item["text"]).split()), str(item["step"]))
        for item in raw
        if isinstance(item, dict) and {"task", "text", "step"} <= set(item)
    )


@dataclass(frozen=True)
class Canonical:
    """A group's canonical sentence as its source keeps it, and the steps it is raised
    at (the crowd's most named first for a dataset situation; its own step otherwise)."""

    text: str
    steps: tuple[str, ...]


@dataclass(frozen=True)
class CanonicalSources:
    """Where canonical sentences are kept, loaded once."""

    dataset: SituationDataset
    benign: Sequence[CalibrationItem]
    near_misses: Sequence[NearMiss]

    def resolve(self, group: ParaphraseGroup, source: str = "<paraphrases>") -> Canonical:
        """The group's canonical sentence; an error naming the group's line when its
        source does not hold it (a canonical must be a sentence the method is measured
        or tuned on, never one written beside the rewordings)."""
        where = f"{source}, line {group.line}"
        if group.source == "dataset":
            task_id = get_task(group.task).dataset_id
            for situation in self.dataset.for_task(task_id or -1):
                if str(situation.index) == group.ref:
                    ranked = sorted(situation.at_actions, key=lambda a: -a[1])
                    return Canonical(
                        situation.text.strip(),
                        tuple(action for action, count in ranked if count > 0),
                    )
            raise CowpError(
                f"{where}: task {group.task} (dataset task {task_id}) has no situation "
                f"{group.ref} in {self.dataset.path}"
            )
        if group.source == "benign":
            for item in self.benign:
                if item.task == group.task and item.situation == group.ref:
                    return Canonical(item.situation, (item.action,))
            raise CowpError(f"{where}: {group.ref!r} is not a benign situation of {group.task}")
        for miss in self.near_misses:
            if miss.task == group.task and miss.text == group.ref:
                return Canonical(miss.text, (miss.step,))
        raise CowpError(f"{where}: {group.ref!r} is not a near miss of {group.task}")
