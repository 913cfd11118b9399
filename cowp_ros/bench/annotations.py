"""The judge of "acceptable to humans", read from one reviewable YAML file per task.

See `benchmarks/annotations/README.md` for the format and who may change the files. The
judge answers what the world needs and nothing else:

- what a dataset situation does (`effect_of`): which task objects it makes unusable
  (maybe depending on the step it is raised at), or that it is beyond the robot's
  skills, or that it blocks nothing;
- whether a kind of object is acceptable in a role *for one action*
  (`accepts(role, kind, action)`): a broom may grasp and clean in the vacuum's place
  but "plug the broom into the outlet" is no acceptable step;
- which situations even a method that knows every answer cannot solve, and why
  (`unsolvable`): a decision written down, checked by running the oracle.

It counts every judgement it makes, by rule, so a report can say how much each
annotation decided. Nothing here is visible to a benchmark method (only the oracle
reads it, through `cowp_ros.bench.privileged`).
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.bench.dataset import DatasetSituation
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.tasks import TaskSpec

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "annotations"
ALL_ACTIONS = "all"
UNSOLVABLE_REASONS = {
    "beyond_skills": "the situation blocks an action for every object (no skill works around it)",
    "no_stand_in": "nothing in the house, not even with every object present, can take the "
    "disabled object's role in an acceptable way",
}


class Effect(enum.Enum):
    """What a situation does to the simulated world once it occurs."""

    DISABLES = "disables"  # its objects are unusable from then on (release steps aside)
    BEYOND_SKILLS = "beyond_skills"  # the step's action fails for every object from then on
    NO_EFFECT = "no_effect"  # nothing the robot does is blocked


class Harm(enum.Enum):
    """Whether the robot would notice a blocking effect by trying.

    A visible harm (missing, broken, stuck, too heavy) makes the step fail where the
    robot can see it. A silent one (dirty, contaminated, occupied by something the
    gripper would not notice, too hot) lets the step succeed: the harm is done, the
    judge records it and the trial fails. Only understanding the sentence avoids it.
    """

    VISIBLE = "visible"
    SILENT = "silent"


@dataclass(frozen=True)
class SituationEffect:
    """A situation's effect; `targets_at(action)` are the objects it disables there."""

    effect: Effect
    targets: tuple[str, ...]
    why: str
    rule: str  # which annotation rule decided it, for the judgement counts
    at: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    harm: Harm = Harm.VISIBLE
    action: str = ""
    """For `beyond_skills`: the action it puts beyond the robot's skills ("the water is
    hot" stops filling, whichever step it was noticed at); "" = the step it was raised at."""

    @property
    def silent(self) -> bool:
        return self.harm is Harm.SILENT

    def judged_as(self) -> str:
        """The effect as the consistency check compares it: `disables/silent`..."""
        if self.effect is Effect.NO_EFFECT:
            return self.effect.value
        return f"{self.effect.value}/{self.harm.value}"

    def targets_at(self, action: str) -> tuple[str, ...]:
        """The objects disabled when the situation is raised before a step of `action`."""
        if self.effect is not Effect.DISABLES:
            return ()
        return tuple(self.at.get(action, self.targets))


@dataclass(frozen=True)
class Unsolvable:
    """A situation (at some or all of its steps) that not even the oracle can handle."""

    index: int
    reason: str  # a key of UNSOLVABLE_REASONS
    why: str
    at: tuple[str, ...] = ()  # the steps it is unsolvable at; () = every step

    def covers(self, action: str) -> bool:
        return not self.at or action in self.at


@dataclass
class TaskAnnotation:
    """One task's judge file, with counters of the judgements it made."""

    task: str
    dataset_id: int
    path: Path
    stand_ins: dict[str, dict[str, frozenset[str] | None]]
    """role -> kind -> the actions it is accepted in (None: every action of the role)."""
    objects: dict[str, tuple[str, ...]]
    situations: dict[int, dict[str, Any]]
    unsolvable: dict[int, Unsolvable]
    counts: Counter[str] = field(default_factory=Counter)

    # ---- effects ------------------------------------------------------------------

    def effect_of(self, situation: DatasetSituation, spec: TaskSpec) -> SituationEffect:
        """What `situation` does; raises CowpError when the file leaves it undecided."""
        entry = self.situations.get(situation.index)
        rule = f"situations.{situation.index}"
        harm = Harm(str((entry or {}).get("harm", Harm.VISIBLE.value)))
        if entry is not None and entry.get("effect") == Effect.NO_EFFECT.value:
            return SituationEffect(Effect.NO_EFFECT, (), str(entry.get("why", "")), rule)
        if entry is not None and entry.get("effect") == Effect.BEYOND_SKILLS.value:
            action = str(entry.get("action", ""))
            why = str(entry.get("why", ""))
            return SituationEffect(Effect.BEYOND_SKILLS, (), why, rule, harm=harm, action=action)
        if entry is not None and "disables" in entry:
            targets = _names(entry["disables"])
            at = {str(a): _names(t) for a, t in (entry.get("at") or {}).items()}
            why = str(entry.get("why", ""))
            return SituationEffect(Effect.DISABLES, targets, why, rule, at, harm)
        why = str(entry.get("why", "")) if entry else ""
        word = situation.object.lower()
        if word in self.objects:
            targets = self.objects[word]
            return SituationEffect(Effect.DISABLES, targets, why, f"objects.{word}", harm=harm)
        by_type = {name.rsplit("_", 1)[0]: name for name in spec.task_objects}
        if word.replace(" ", "_") in by_type:
            target = by_type[word.replace(" ", "_")]
            return SituationEffect(Effect.DISABLES, (target,), why, "default object", harm=harm)
        raise CowpError(
            f"{self.path}: situation {situation.index} ({situation.text!r}, object "
            f"{situation.object!r}) has no effect written down",
            hint="add it under `objects` (which task object it disables) or `situations` "
            "(disables, beyond_skills or no_effect, with why)",
        )

    def task_specific(self, index: int) -> str:
        """The file's reason why situation `index` is judged unlike the same words elsewhere."""
        entry = self.situations.get(index) or {}
        return str(entry.get("task_specific", ""))

    # ---- stand-ins ----------------------------------------------------------------

    def accepts(self, role: str, kind: str, action: str) -> bool:
        """Would a person accept a `kind` doing `role`'s job in `action` of this task?"""
        kinds = self.stand_ins.get(role, {})
        actions = kinds.get(kind, frozenset()) if kind in kinds else frozenset()
        accepted = actions is None or action in actions
        verdict = "yes" if accepted else "no"
        self.counts[f"stand_ins.{role}.{kind}.{action}={verdict}"] += 1
        return accepted

    def accepted_kinds(self, role: str, action: str) -> list[str]:
        """Kinds accepted in `role` for `action` (no counting: the oracle's lookup)."""
        return sorted(
            kind
            for kind, actions in self.stand_ins.get(role, {}).items()
            if actions is None or action in actions
        )

    def accepted_for_role(self, role: str, role_actions: Iterable[str]) -> list[str]:
        """Kinds accepted in every one of the role's actions: a stand-in for the whole role."""
        wanted = list(role_actions)
        return sorted(
            kind
            for kind, actions in self.stand_ins.get(role, {}).items()
            if actions is None or all(a in actions for a in wanted)
        )

    def count(self, rule: str) -> None:
        self.counts[rule] += 1

    # ---- checks -------------------------------------------------------------------

    def check_covers(self, situations: Iterable[DatasetSituation], spec: TaskSpec) -> None:
        """Fail at load time, not mid-run, if any situation is undecided or names a wrong
        object, stand-in or action."""
        task = spec.load()
        situations = list(situations)
        known = {s.index for s in situations}
        for situation in situations:
            effect = self.effect_of(situation, spec)
            for target in {*effect.targets, *(t for ts in effect.at.values() for t in ts)}:
                if target not in spec.task_objects:
                    raise CowpError(
                        f"{self.path}: situation {situation.index} disables {target}, which "
                        f"is not one of the task's objects {list(spec.task_objects)}"
                    )
            if effect.action and effect.action not in task.actions:
                raise CowpError(
                    f"{self.path}: situation {situation.index} puts {effect.action!r} beyond "
                    f"the robot's skills, which is no action of the task's domain"
                )
            for action in effect.at:
                if situation.weight_at(action) <= 0:
                    raise CowpError(
                        f"{self.path}: situation {situation.index} has `at: {action}`, a step "
                        "the dataset never places it at"
                    )
        for index in [*self.situations, *self.unsolvable]:
            if index not in known:
                raise CowpError(f"{self.path}: the dataset has no situation {index} in this task")
        self._check_stand_ins(task, spec)

    def _check_stand_ins(self, task: PlanningTask, spec: TaskSpec) -> None:
        role_types = {task.objects[o] for o in spec.task_objects}
        for role, kinds in self.stand_ins.items():
            if role not in role_types:
                raise CowpError(
                    f"{self.path}: stand_ins names role {role!r}, the kind of none of the "
                    f"task's objects {list(spec.task_objects)}"
                )
            actions_of_role = {a for a in task.actions if role in task.parameter_types(a)}
            for kind, actions in kinds.items():
                if kind not in task.types or task.types.get(kind) != task.types.get(role):
                    raise CowpError(
                        f"{self.path}: {kind!r} cannot stand in for a {role}: it is not a "
                        "kind of the same parent type in the domain"
                    )
                unknown = sorted((actions or frozenset()) - actions_of_role)
                if unknown:
                    raise CowpError(
                        f"{self.path}: stand_ins.{role}.{kind} names {', '.join(unknown)}, "
                        f"not actions with a {role} (those are "
                        f"{', '.join(sorted(actions_of_role))})"
                    )


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value or ())


def _stand_ins(raw: Any) -> dict[str, dict[str, frozenset[str] | None]]:
    found: dict[str, dict[str, frozenset[str] | None]] = {}
    for role, kinds in (raw or {}).items():
        if not isinstance(kinds, Mapping):
            raise ValueError(f"stand_ins.{role} must map kinds to `all` or a list of actions")
        found[str(role)] = {}
        for kind, actions in kinds.items():
            if actions == ALL_ACTIONS:
                found[str(role)][str(kind)] = None
            elif isinstance(actions, list) and actions:
                found[str(role)][str(kind)] = frozenset(str(a) for a in actions)
            else:
                raise ValueError(f"stand_ins.{role}.{kind}: give `all` or a list of actions")
    return found


def _situations(raw: Any) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for key, entry in (raw or {}).items():
        index = int(key)
        entry = dict(entry or {})
        effect = entry.get("effect", Effect.DISABLES.value if "disables" in entry else None)
        if effect is None and "harm" in entry:
            effect = "default"  # the default object, with the harm written down
        if effect is None:
            raise ValueError(f"situation {index}: give `effect`, `disables` or `harm`")
        if "harm" in entry:
            Harm(entry["harm"])  # ValueError for anything but visible or silent
            if effect == Effect.NO_EFFECT.value:
                raise ValueError(f"situation {index}: a `no_effect` situation does no harm")
        if "action" in entry and effect != Effect.BEYOND_SKILLS.value:
            raise ValueError(f"situation {index}: `action` is for `effect: beyond_skills`")
        if effect == "default":
            found[index] = entry
            continue
        Effect(effect)  # ValueError for an unknown effect
        if effect == Effect.DISABLES.value and "disables" not in entry:
            raise ValueError(f"situation {index}: `effect: disables` needs `disables: [objects]`")
        if "at" in entry and not isinstance(entry["at"], Mapping):
            raise ValueError(f"situation {index}: `at` maps step actions to objects")
        entry["effect"] = effect
        found[index] = entry
    return found


def _unsolvable(raw: Any) -> dict[int, Unsolvable]:
    found: dict[int, Unsolvable] = {}
    for key, entry in (raw or {}).items():
        index = int(key)
        entry = dict(entry or {})
        reason = str(entry.get("reason", ""))
        if reason not in UNSOLVABLE_REASONS:
            raise ValueError(
                f"unsolvable.{index}: reason must be one of {', '.join(UNSOLVABLE_REASONS)}"
            )
        if not str(entry.get("why", "")).strip():
            raise ValueError(f"unsolvable.{index}: say why in `why`")
        found[index] = Unsolvable(index, reason, str(entry["why"]), _names(entry.get("at")))
    return found


def load_annotation(path: Path) -> TaskAnnotation:
    try:
        raw: Mapping[str, Any] = yaml.safe_load(path.read_text()) or {}
        if "acceptable" in raw:
            raise ValueError(
                "`acceptable` (per role) is the old format: write `stand_ins` per role, kind "
                "and action"
            )
        return TaskAnnotation(
            task=str(raw["task"]),
            dataset_id=int(raw["dataset_id"]),
            path=path,
            stand_ins=_stand_ins(raw.get("stand_ins")),
            objects={str(k).lower(): _names(v) for k, v in (raw.get("objects") or {}).items()},
            situations=_situations(raw.get("situations")),
            unsolvable=_unsolvable(raw.get("unsolvable")),
        )
    except (OSError, yaml.YAMLError, KeyError, ValueError, TypeError) as err:
        raise CowpError(
            f"cannot read the benchmark annotation {path}: {err!r}",
            hint="see benchmarks/annotations/README.md for the format",
        ) from err


def load_annotations(directory: Path = DEFAULT_DIR) -> dict[str, TaskAnnotation]:
    """Every `<task>.yaml` in `directory`, by task name."""
    if not directory.is_dir():
        raise CowpError(
            f"no benchmark annotations at {directory}",
            hint="pass --annotations with the folder of <task>.yaml judge files",
        )
    found = {}
    for path in sorted(directory.glob("*.yaml")):
        annotation = load_annotation(path)
        found[annotation.task] = annotation
    return found


def wording(text: str) -> str:
    """A situation's words for comparing tasks: lower case, no final stop, one space."""
    return re.sub(r"\s+", " ", text.strip().lower().rstrip(".")).strip()


@dataclass(frozen=True)
class Inconsistency:
    """The same words about the same object, judged differently in two tasks."""

    text: str
    object: str
    judged: tuple[tuple[str, int, str], ...]  # (task, index, effect)

    def __str__(self) -> str:
        ways = "; ".join(f"{t} #{i}: {e}" for t, i, e in self.judged)
        return f"{self.text!r} ({self.object}) is judged differently: {ways}"


def inconsistencies(
    annotations: Mapping[str, TaskAnnotation],
    situations: Sequence[DatasetSituation],
    specs: Mapping[int, TaskSpec],
) -> list[Inconsistency]:
    """Same object + wording with different effects in two tasks, with no reason given.

    A difference is accepted only when, of the ways it is judged, all but one are
    explained: each file judging it that way says why under `task_specific` ("the robot
    only takes the plate off the table": a dirty table blocks setting a meal on it, not
    clearing a plate from it).
    """
    by_words: dict[tuple[str, str], list[tuple[str, int, str]]] = {}
    for situation in situations:
        spec = specs.get(situation.task_id)
        if spec is None or spec.name not in annotations:
            continue
        annotation = annotations[spec.name]
        effect = annotation.effect_of(situation, spec).judged_as()
        key = (wording(situation.text), situation.object.lower())
        by_words.setdefault(key, []).append((spec.name, situation.index, effect))
    found = []
    for (text, obj), judged in sorted(by_words.items()):
        groups: dict[str, list[tuple[str, int, str]]] = {}
        for item in judged:
            groups.setdefault(item[2], []).append(item)
        unexplained = [
            effect
            for effect, items in groups.items()
            if not all(annotations[task].task_specific(index) for task, index, _ in items)
        ]
        if len(unexplained) > 1:
            found.append(Inconsistency(text, obj, tuple(judged)))
    return found
