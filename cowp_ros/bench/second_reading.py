"""A second, independent reading of the judge files: the blind sheet and the agreement.

The benchmark's figures rest on the judge files (`benchmarks/annotations/<task>.yaml`),
written by one reader. A reviewer asks how far a second reader, who never saw them,
would agree. This module writes what that reader gets, the *blind sheet*: every
(task, situation) of the chosen tasks with what is needed to judge it (the sentence,
the steps people said it arises at, the task's objects and actions, the house's kinds)
and the fields to fill with their definitions, and none of the first reading's values.
Given the filled sheet, it computes per field the agreement with the first reading
(the share of items that agree, and Cohen's kappa) and lists every disagreement, for
the judge files' owner to resolve and record (benchmarks/annotations/README.md).

Kappa corrects the raw agreement for what two readers agreeing by chance would reach
given how often each used each answer: kappa = (p_o - p_e) / (1 - p_e). It is not
defined when both readers gave one and the same answer to every item (p_e = 1); the
report then says so rather than print 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.bench.annotations import Effect, TaskAnnotation
from cowp_ros.bench.dataset import DatasetSituation, SituationDataset
from cowp_ros.errors import CowpError
from cowp_ros.tasks import TaskSpec

FIELDS: dict[str, str] = {
    "effect": (
        "What the situation does to the task, as a person watching the robot would "
        "judge it. One of: disables (it makes one or more of the task's objects unusable "
        "for the task from then on: a broken cup, a dirty plate, a missing burger); "
        "beyond_skills (it stops an action whatever object the robot would use: a power "
        "outage, the robot slips); no_effect (the task goes on as planned: nothing a step "
        "needs is changed)."
    ),
    "disables": (
        "With effect disables: the task's objects (names from `objects`) it makes "
        "unusable, e.g. [plate_1]; [] otherwise."
    ),
    "harm": (
        "With effect disables or beyond_skills: visible (the robot would notice when it "
        "tries: missing, broken, stuck, too heavy; the step fails) or silent (the step "
        "would succeed and do harm unnoticed: dirty, contaminated, expired, occupied by "
        "someone, too hot). Empty with no_effect."
    ),
    "action": (
        "With effect beyond_skills: the action (a name from `actions`) it puts beyond "
        "the robot's skills, when that is not the step it arises at (hot water stops "
        "filling wherever it was noticed); empty otherwise."
    ),
    "unsolvable": (
        "Whether even a robot with every object of the house present (`house`) could "
        "not reach the task's goal acceptably after the situation. One of: none (it "
        "could: another object of the kind, an acceptable stand-in of another kind, "
        "another way); beyond_skills (no skill works around it); no_stand_in (nothing "
        "in the house can take the disabled object's role acceptably)."
    ),
}
"""The fields a second reader fills, with the definitions they are given."""

CHOICES: dict[str, tuple[str, ...]] = {
    "effect": tuple(e.value for e in Effect),
    "harm": ("", "visible", "silent"),
    "unsolvable": ("none", "beyond_skills", "no_stand_in"),
}
INSTRUCTIONS = (
    "Judge each item on its own, from the sentence, the task and what a person "
    "watching the robot would accept. Do not read benchmarks/annotations/*.yaml, the "
    "benchmark's results, or anyone's judgement of these items before you have filled "
    "every item: this is an independent second reading. Fill the fields under "
    "`reading` of every item (definitions under `fields`); write anything you were "
    "unsure of under `notes`. Then run `cowp judge agreement <this file>`."
)


def _item(spec: TaskSpec, situation: DatasetSituation) -> dict[str, Any]:
    return {
        "id": f"{spec.name}/{situation.index}",
        "task": spec.name,
        "situation": situation.text,
        "about": situation.object,
        "steps": [{"action": str(a), "reports": int(n)} for a, n in situation.at_actions],
        "reading": {"effect": "", "disables": [], "harm": "", "action": "", "unsolvable": ""},
        "notes": "",
    }


def _task_block(spec: TaskSpec) -> dict[str, Any]:
    task = spec.load()
    house = spec.load_house()
    return {
        "description": spec.description,
        "objects": {str(name): str(task.objects[name]) for name in spec.task_objects},
        "actions": {
            str(name): [str(t) for t in task.parameter_types(name)] for name in sorted(task.actions)
        },
        "goal": sorted(str(a) for a in task.goal_atoms),
        "house": dict(
            sorted(Counter(str(house.objects[o]) for o in house.problem_object_names).items())
        ),
    }


def blind_sheet(specs: Sequence[TaskSpec], dataset: SituationDataset) -> dict[str, Any]:
    """The sheet a second reader fills: every (task, situation) of `specs`, blind."""
    tasks = {}
    items = []
    for spec in specs:
        if spec.dataset_id is None:
            raise CowpError(f"task {spec.name} has no dataset situations to judge")
        tasks[spec.name] = _task_block(spec)
        items += [_item(spec, situation) for situation in dataset.for_task(spec.dataset_id)]
    return {"instructions": INSTRUCTIONS, "fields": FIELDS, "tasks": tasks, "items": items}


def write_sheet(sheet: Mapping[str, Any], path: Path) -> None:
    header = (
        "# The blind item sheet for a second reading of the judge files (written by\n"
        "# `cowp judge sheet`; see cowp_ros/bench/second_reading.py). It holds no value\n"
        "# of the first reading. Fill `reading` of every item, then `cowp judge agreement`.\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump(dict(sheet), sort_keys=False, width=88))


def first_reading(
    annotation: TaskAnnotation, situation: DatasetSituation, spec: TaskSpec
) -> dict[str, Any]:
    """The judge file's values of the sheet's fields for one situation."""
    effect = annotation.effect_of(situation, spec)
    declared = annotation.unsolvable.get(situation.index)
    kind = effect.effect
    return {
        "effect": kind.value,
        "disables": sorted(effect.targets) if kind is Effect.DISABLES else [],
        "harm": "" if kind is Effect.NO_EFFECT else effect.harm.value,
        "action": effect.action if kind is Effect.BEYOND_SKILLS else "",
        "unsolvable": declared.reason if declared is not None else "none",
    }


def label(field: str, value: Any) -> str:
    """A field's value as one category (a list of objects is one answer, in any order)."""
    if field == "disables":
        return ",".join(sorted(str(v) for v in value or []))
    return str(value or "").strip()


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two readers' categories over the same items (None: undefined)."""
    if len(first) != len(second) or not first:
        raise CowpError("kappa needs the same, non-empty list of items from both readers")
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    one, two = Counter(first), Counter(second)
    expected = sum(one[k] * two[k] for k in one) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class Disagreement:
    item: str
    situation: str
    field: str
    first: str
    second: str


def _filled(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    reading = item.get("reading")
    if not isinstance(reading, Mapping):
        raise CowpError(f"{where}: no `reading`", hint="fill the item's reading fields")
    harmless = reading.get("effect") == Effect.NO_EFFECT.value
    for field, choices in CHOICES.items():
        value = str(reading.get(field) or "")
        allowed = ("",) if (field == "harm" and harmless) else tuple(c for c in choices if c)
        if value not in allowed:
            raise CowpError(
                f"{where}: {field} is {value!r}",
                hint=f"give one of {', '.join(c or '(empty)' for c in allowed)} "
                "(definitions under `fields`)",
            )
    return dict(reading)


def agreement(
    sheet: Mapping[str, Any],
    annotations: Mapping[str, TaskAnnotation],
    dataset: SituationDataset,
    specs: Mapping[str, TaskSpec],
) -> dict[str, Any]:
    """Per field: the share of items agreeing, Cohen's kappa, and the disagreements."""
    items = sheet.get("items")
    if not isinstance(items, list) or not items:
        raise CowpError("the sheet has no items", hint="give the file `cowp judge sheet` wrote")
    firsts: list[dict[str, Any]] = []
    seconds: list[dict[str, Any]] = []
    names: list[tuple[str, str]] = []
    for item in items:
        where = f"item {item.get('id', '?')}"
        spec = specs.get(str(item.get("task")))
        if spec is None or spec.name not in annotations or spec.dataset_id is None:
            raise CowpError(f"{where}: unknown task {item.get('task')!r}")
        index = int(str(item["id"]).rsplit("/", 1)[1])
        found = [s for s in dataset.for_task(spec.dataset_id) if s.index == index]
        if not found:
            raise CowpError(f"{where}: the dataset has no situation {index} for {spec.name}")
        seconds.append(_filled(item, where))
        firsts.append(first_reading(annotations[spec.name], found[0], spec))
        names.append((str(item["id"]), found[0].text))
    fields: dict[str, Any] = {}
    disagreements: list[Disagreement] = []
    for field in FIELDS:
        one = [label(field, f.get(field)) for f in firsts]
        two = [label(field, s.get(field)) for s in seconds]
        agree = sum(a == b for a, b in zip(one, two, strict=True))
        fields[field] = {
            "items": len(one),
            "agree": agree,
            "share": round(agree / len(one), 3),
            "kappa": None if (k := cohen_kappa(one, two)) is None else round(k, 3),
        }
        disagreements += [
            Disagreement(name, text, field, a, b)
            for (name, text), a, b in zip(names, one, two, strict=True)
            if a != b
        ]
    return {"fields": fields, "disagreements": [d.__dict__ for d in disagreements]}


def agreement_markdown(report: Mapping[str, Any]) -> str:
    lines = [
        "| field | items | agree | share | Cohen's kappa |",
        "|---|---|---|---|---|",
    ]
    for field, f in report["fields"].items():
        kappa = "undefined (one answer only)" if f["kappa"] is None else f"{f['kappa']:g}"
        lines.append(f"| {field} | {f['items']} | {f['agree']} | {f['share']:g} | {kappa} |")
    lines += ["", "| item | situation | field | first reading | second reading |"]
    lines.append("|---|---|---|---|---|")
    for d in report["disagreements"]:
        lines.append(
            f"| {d['item']} | {d['situation']} | {d['field']} | {d['first'] or '-'} | "
            f"{d['second'] or '-'} |"
        )
    return "\n".join(lines) + "\n"
