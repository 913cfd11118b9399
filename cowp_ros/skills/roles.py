"""Skills bound by roles: every action of the registered tasks, and the skill it runs.

config/skills.yaml binds a skill's roles to a step's arguments by index, or by the
action's parameter *name* (`?to`): the destination of `walk_to ?from ?to` is `?to`,
whatever its position. Names come from the domains of the registered tasks (shipped and
added with `--tasks`/`COWP_TASKS`); a task's registry entry may add its own bindings
(`skills:`) and where its objects are found (`object_locations:`). `binding_table` says,
for one task, which skill each of its actions runs with which of its parameters, or that
none does: `cowp doctor --task T` prints it and the executor logs it at start-up, so an
action is never bound by a silent guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.skills.skill_map import Binding, SkillMap, _binding, describe_source
from cowp_ros.tasks import TaskSpec


def _parameter_names(action: Any) -> tuple[str, ...]:
    names = []
    for variable in action.parameters:
        name = str(getattr(variable, "name", variable)).lower()
        names.append(name if name.startswith("?") else f"?{name}")
    return tuple(names)


@dataclass(frozen=True)
class ActionRow:
    """One action of a task: its parameters, the skill it runs and how, or why none."""

    action: str
    parameters: tuple[tuple[str, str], ...]  # (?name, type)
    skill: str | None
    roles: tuple[tuple[str, str], ...]  # (role, ?name or literal)
    matched_by: str
    problem: str = ""

    def line(self) -> str:
        params = " ".join(f"{n} - {t}" for n, t in self.parameters)
        head = f"{self.action}({params})"
        if self.skill is None:
            return f"{head} -> NO SKILL: {self.problem}"
        roles = ", ".join(f"{r}={v}" for r, v in self.roles) or "no roles"
        return f"{head} -> {self.skill} {roles} ({self.matched_by})"


def with_tasks(skill_map: SkillMap, specs: Iterable[TaskSpec]) -> SkillMap:
    """`skill_map` knowing the registered tasks: their actions' parameter names, their
    own `skills:` bindings and `object_locations:`."""
    signatures: dict[str, dict[int, tuple[str, ...]]] = {
        k: dict(v) for k, v in skill_map.signatures.items()
    }
    actions: dict[str, Binding] = dict(skill_map.actions)
    locations = dict(skill_map.object_locations)
    for spec in specs:
        task = spec.load()
        for name, action in task.actions.items():
            names = _parameter_names(action)
            by_arity = signatures.setdefault(name.lower(), {})
            if by_arity.get(len(names), names) != names:
                by_arity[len(names)] = ()  # two domains disagree: bind by index only
            else:
                by_arity[len(names)] = names
        own = spec.extra.get("skills") or {}
        if not isinstance(own, Mapping):
            raise CowpError(f"task {spec.name}: skills: must map action names to bindings")
        for action_name, entry in own.items():
            where = f"task {spec.name}: skills.{action_name}"
            actions[str(action_name).lower()] = _binding(
                spec.domain_path, where, entry, skill_map.skills
            )
        places = spec.extra.get("object_locations") or {}
        if not isinstance(places, Mapping):
            raise CowpError(f"task {spec.name}: object_locations: must map classes to places")
        locations.update({str(k).lower(): str(v) for k, v in places.items()})
    for by_arity in signatures.values():
        for arity, names in list(by_arity.items()):
            if not names and arity:
                del by_arity[arity]
    return replace(skill_map, signatures=signatures, actions=actions, object_locations=locations)


def binding_table(skill_map: SkillMap, spec: TaskSpec) -> list[ActionRow]:
    """Each action of `spec`'s domain with the skill it runs, bound by role."""
    task = spec.load()
    rows = []
    for name, action in task.actions.items():
        names = _parameter_names(action)
        types = task.parameter_types(name)
        parameters = tuple(zip(names, types, strict=True))
        try:
            call = skill_map.resolve(name, list(names))
        except CowpError as err:
            rows.append(ActionRow(name, parameters, None, (), "", err.message))
            continue
        binding, _ = skill_map.binding_for(name)
        roles = tuple(
            (role, value if value.startswith("?") else describe_source(binding.bind[role]))
            for role, value in call.roles.items()
        )
        rows.append(ActionRow(name, parameters, call.skill.name, roles, call.matched_by))
    return rows


def registered_skill_map(skill_map: SkillMap) -> tuple[SkillMap, list[str]]:
    """`skill_map` knowing every registered task, and one line per action that no skill
    runs (what the executor says at start-up)."""
    from cowp_ros.tasks import all_tasks

    specs = list(all_tasks().values())
    known = with_tasks(skill_map, specs)
    unbound = [
        f"task {spec.name}: {row.line()}"
        for spec in specs
        for row in binding_table(known, spec)
        if row.skill is None
    ]
    return known, unbound
