"""config/skills.yaml: which skill runs a PDDL action, and with which of its arguments.

The mapping is data, not code, because COWP changes the action set while it runs: the
Knowledge Acquirer applies an action to a substitute object (fill_cup on a bowl) or
creates a variant with a new name (fill_cup_bowl). Lookup therefore tolerates names it
was never told about: exact name, then the longest known action the name extends, then
a verb pattern; only then does it fail, naming the action and the file to edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.skills.config import read_yaml

PRIMITIVES = (
    "navigate",
    "arm",
    "gripper",
    "grasp",
    "grip",
    "release",
    "detect",
    "look",
    "under",
    "pour_into",
    "approach",
    "reach",
    "lift",
    "pull",
    "holding",
    "fetch",
)
GRIPPER_COMMANDS = ("open", "close")
# Primitives whose value is a role to bind; `arm` takes a pose name, `gripper` a command.
ROLE_PRIMITIVES = tuple(p for p in PRIMITIVES if p not in ("arm", "gripper"))


@dataclass(frozen=True)
class Primitive:
    """One step of a skill: a kind (navigate, arm, ...) and its role or value."""

    kind: str
    value: str


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    steps: tuple[Primitive, ...]

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(p.value for p in self.steps if p.kind in ROLE_PRIMITIVES)


Source = int | str | list[int | str]
"""Where a role's value comes from: an argument index (0 first, -1 last), `?name` (the
action's parameter of that name), a literal name, or a list of these tried in order."""


@dataclass(frozen=True)
class Binding:
    """role -> where its value comes from (see `Source`)."""

    skill: str
    bind: dict[str, Source]


def _bound(source: Source, args: tuple[str, ...], parameters: tuple[str, ...] | None) -> str | None:
    """The value `source` gives for a step, or None when it does not apply to this step."""
    if isinstance(source, list):
        for alternative in source:
            value = _bound(alternative, args, parameters)
            if value is not None:
                return value
        return None
    if isinstance(source, int):
        return args[source] if -len(args) <= source < len(args) else None
    if source.startswith("?"):
        if parameters is None or source.lower() not in parameters:
            return None
        return args[parameters.index(source.lower())]
    return source


def describe_source(source: Source) -> str:
    if isinstance(source, list):
        return " or ".join(describe_source(s) for s in source)
    if isinstance(source, int):
        return f"argument {source}"
    return source if source.startswith("?") else f"'{source}'"


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    binding: Binding


@dataclass(frozen=True)
class SkillCall:
    """A plan step resolved: the skill, its bound roles, and how it was matched."""

    action: str
    arguments: tuple[str, ...]
    skill: Skill
    roles: dict[str, str]
    matched_by: str  # "action", "variant of NAME", "pattern REGEX" or "skill called directly"


@dataclass
class SkillMap:
    path: Path
    skills: dict[str, Skill]
    actions: dict[str, Binding]
    patterns: list[Pattern]
    location_aliases: dict[str, str] = field(default_factory=dict)
    object_locations: dict[str, str] = field(default_factory=dict)
    detection_classes: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, dict[int, tuple[str, ...]]] = field(default_factory=dict)
    """Action name -> number of arguments -> its parameter names (`?from`, `?to`), from
    the domains of the registered tasks (`cowp_ros.skills.roles`): what `?name` binds."""

    def parameters(self, action: str, arity: int) -> tuple[str, ...] | None:
        """The parameter names of a step's action (an acquired variant has its base
        action's), or None when no registered domain says."""
        name = action.strip().lower()
        for candidate in (name, name.split("__", 1)[0]):
            found = self.signatures.get(candidate, {}).get(arity)
            if found is not None:
                return found
        return None

    def binding_for(self, action: str) -> tuple[Binding, str]:
        """The binding for an action name and how it was found; CowpError if none."""
        name = action.strip().lower()
        if name in self.actions:
            return self.actions[name], "action"
        variants = [known for known in self.actions if name.startswith(known + "_")]
        if variants:
            known = max(variants, key=len)
            return self.actions[known], f"variant of {known}"
        for pattern in self.patterns:
            if pattern.regex.match(name):
                return pattern.binding, f"pattern {pattern.regex.pattern}"
        raise CowpError(
            f"no skill for PDDL action '{action}' in {self.path}",
            hint="add it under actions: (or a matching entry under patterns:) in that file",
        )

    def resolve(self, action: str, arguments: list[str] | tuple[str, ...]) -> SkillCall:
        """Bind a plan step's arguments to its skill's roles.

        A skill's own name with ROLE=VALUE arguments (pick object=cup_1) calls that
        skill directly: how a person tries one skill alone (`cowp skill`).
        """
        if action in self.skills and arguments and all("=" in a for a in arguments):
            return self.call_skill(action, arguments)
        binding, matched_by = self.binding_for(action)
        skill = self.skills[binding.skill]
        args = tuple(arguments)
        parameters = self.parameters(action, len(args))
        roles: dict[str, str] = {}
        for role, source in binding.bind.items():
            value = _bound(source, args, parameters)
            if value is None:
                said = (
                    f"its parameters are {' '.join(parameters)}"
                    if parameters is not None
                    else "no registered domain gives its parameters"
                )
                raise CowpError(
                    f"{action}({', '.join(args)}): skill '{skill.name}' binds role '{role}' "
                    f"to {describe_source(source)}, but the step has {len(args)} argument(s) "
                    f"and {said} ({matched_by} in {self.path})"
                )
            roles[role] = value
        return SkillCall(action, args, skill, roles, matched_by)

    def call_skill(self, name: str, assignments: list[str] | tuple[str, ...]) -> SkillCall:
        """A skill with its roles given as ROLE=VALUE; every role, and no other."""
        skill = self.skills.get(name)
        if skill is None:
            raise CowpError(
                f"no skill '{name}' in {self.path}",
                hint=f"skills: {', '.join(sorted(self.skills))}",
            )
        roles: dict[str, str] = {}
        for assignment in assignments:
            role, sep, value = assignment.partition("=")
            if not sep or not role or not value:
                raise CowpError(f"'{assignment}' is not ROLE=VALUE")
            roles[role.strip()] = value.strip()
        wanted = ", ".join(f"{r}=..." for r in sorted(skill.roles)) or "no roles"
        unknown = set(roles) - skill.roles
        if unknown:
            raise CowpError(
                f"skill '{name}' has no role {', '.join(sorted(unknown))}",
                hint=f"it takes {wanted}",
            )
        missing = skill.roles - set(roles)
        if missing:
            raise CowpError(
                f"skill '{name}' needs {', '.join(sorted(missing))}", hint=f"it takes {wanted}"
            )
        return SkillCall(name, tuple(assignments), skill, roles, "skill called directly")


def _binding(path: Path, where: str, entry: Any, skills: dict[str, Skill]) -> Binding:
    if not isinstance(entry, dict) or "skill" not in entry:
        raise CowpError(f"{path}: {where} must be {{skill: NAME, bind: {{ROLE: INDEX}}}}")
    skill = entry["skill"]
    if skill not in skills:
        raise CowpError(f"{path}: {where} names unknown skill '{skill}' (see skills:)")
    bind = entry.get("bind") or {}
    if not isinstance(bind, dict) or not all(_is_source(v) for v in bind.values()):
        raise CowpError(
            f"{path}: {where}.bind must map roles to argument indices, ?parameter names, "
            "literal names, or lists of these"
        )
    missing = skills[skill].roles - set(bind)
    if missing:
        raise CowpError(
            f"{path}: {where} leaves role(s) {', '.join(sorted(missing))} of skill "
            f"'{skill}' unbound"
        )
    return Binding(
        skill=str(skill),
        bind={
            str(k): [_lower(x) for x in v] if isinstance(v, list) else _lower(v)
            for k, v in bind.items()
        },
    )


def _lower(value: int | str) -> int | str:
    """`?To` and `?to` are one parameter (PDDL names are case-insensitive)."""
    return value.lower() if isinstance(value, str) and value.startswith("?") else value


def _is_source(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_source(v) and not isinstance(v, list) for v in value)
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _skill(path: Path, name: str, entry: Any, poses: set[str] | None) -> Skill:
    if not isinstance(entry, dict) or not isinstance(entry.get("steps"), list):
        raise CowpError(f"{path}: skills.{name} must have a steps: list")
    steps: list[Primitive] = []
    for index, raw in enumerate(entry["steps"]):
        where = f"skills.{name}.steps[{index}]"
        if not isinstance(raw, dict) or len(raw) != 1:
            raise CowpError(f"{path}: {where} must be one {{KIND: VALUE}} pair")
        ((kind, value),) = raw.items()
        if kind not in PRIMITIVES:
            raise CowpError(f"{path}: {where}: unknown kind '{kind}' (one of {PRIMITIVES})")
        if kind == "gripper" and value not in GRIPPER_COMMANDS:
            raise CowpError(f"{path}: {where}: gripper takes one of {GRIPPER_COMMANDS}")
        if kind == "arm" and poses is not None and value not in poses:
            raise CowpError(f"{path}: {where}: arm pose '{value}' is not in robot.yaml arm.poses")
        steps.append(Primitive(str(kind), str(value)))
    return Skill(name, str(entry.get("description", "")), tuple(steps))


def _names(path: Path, data: dict[str, Any], key: str) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise CowpError(f"{path}: {key} must be a mapping of names")
    return {str(k).lower(): str(v) for k, v in value.items()}


def load_skill_map(path: Path, *, arm_poses: set[str] | None = None) -> SkillMap:
    """Read and validate skills.yaml (arm pose names checked when `arm_poses` is given)."""
    data = read_yaml(path)
    raw_skills = data.get("skills")
    if not isinstance(raw_skills, dict) or not raw_skills:
        raise CowpError(f"{path}: skills: must define at least one skill")
    skills = {str(n): _skill(path, str(n), e, arm_poses) for n, e in raw_skills.items()}
    raw_actions = data.get("actions") or {}
    if not isinstance(raw_actions, dict):
        raise CowpError(f"{path}: actions: must map action names to skills")
    actions = {
        str(name).lower(): _binding(path, f"actions.{name}", entry, skills)
        for name, entry in raw_actions.items()
    }
    patterns: list[Pattern] = []
    for index, entry in enumerate(data.get("patterns") or []):
        where = f"patterns[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("match"), str):
            raise CowpError(f"{path}: {where} needs match: REGEX")
        try:
            regex = re.compile(entry["match"])
        except re.error as err:
            raise CowpError(f"{path}: {where}.match is not a regular expression: {err}") from err
        patterns.append(Pattern(regex, _binding(path, where, entry, skills)))
    return SkillMap(
        path=path,
        skills=skills,
        actions=actions,
        patterns=patterns,
        location_aliases=_names(path, data, "location_aliases"),
        object_locations=_names(path, data, "object_locations"),
        detection_classes=_names(path, data, "detection_classes"),
    )
