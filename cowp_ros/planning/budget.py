"""What one planning call may cost: its grounding size, checked first, and its memory.

A planner grounds actions over the objects their parameters may take before it
searches. An action of 6 parameters over 30 objects is 729 million ground actions: the
grounding grows by tens of megabytes a second until the machine runs out. Real
problems are nothing like that, though the product of their parameters' objects can be:
logistics-10 multiplies out to 829,226 actions and zenotravel's smallest problem to
5 million, of which a few hundred are reachable. So the guard counts what a planner
such as Fast Downward grounds, the actions reachable in the relaxed problem (deletes
ignored), and stops counting at the bound (`reachable_action_count`):

1. the product of counts, when it is within the bound, settles it at once (every
   task of this project);
2. else a relaxed exploration counts reachable ground actions, joining preconditions
   over the facts reached so far, and refuses once the count passes the bound;
3. an exploration that has not decided within `EXPLORATION_STEPS` steps leaves the
   task to the planner, which grounds under its address-space limit (RLIMIT_AS,
   `process.run_with_deadline`, inherited by Fast Downward's translator and search)
   and its deadline: past either, the call ends with an error that names the budget.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pddl.logic.base import Not
from pddl.logic.effects import Forall, When
from pddl.logic.predicates import EqualTo, Predicate
from pddl.logic.terms import Variable

from cowp_ros.limits import MAX_GROUND_ACTIONS, LimitError
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.formulas import conjuncts_of
from cowp_ros.pddl.model import ROOT_TYPE
from cowp_ros.pddl.negation import check_complements

EXPLORATION_STEPS = 2_000_000
"""Join steps the relaxed exploration may take (about two seconds of Python) before it
leaves the question to the planner's own memory and time caps."""
MAX_REACHED_FACTS = 1_000_000
"""Facts the exploration may hold before it counts the task as past the bound."""

OUT_OF_MEMORY_EXIT = 75
"""The pyperplan worker's exit code when it could not allocate (a MemoryError)."""


def _parameter_objects(task: PlanningTask, variable: Variable) -> list[str]:
    tags = [str(t) for t in variable.type_tags] or [ROOT_TYPE]
    # plain `str`: the library's names hash case-insensitively, ten times slower
    return sorted({str(o) for tag in tags for o in task.objects_of_type(tag)})


def _action_product(task: PlanningTask, name: str) -> int:
    return math.prod(len(_parameter_objects(task, v)) for v in task.action(name).parameters)


def ground_action_count(task: PlanningTask) -> int:
    """Ground actions before pruning: per action, the product of the number of objects
    (and constants) each parameter may take, summed over the actions."""
    return sum(_action_product(task, name) for name in task.actions)


@dataclass(frozen=True)
class Reach:
    """What the relaxed exploration found: reachable ground actions counted (up to just
    past the bound), and whether it decided (False: it ran out of steps first)."""

    actions: int
    decided: bool


class _Explorer:
    """Relaxed reachability over one task, counting ground actions up to `limit`."""

    def __init__(self, task: PlanningTask, limit: int, steps: int) -> None:
        self.task = task
        self.limit = limit
        self.steps_left = steps
        self.count = 0
        self.facts: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        self.by_value: dict[tuple[str, int, str], list[tuple[str, ...]]] = defaultdict(list)
        self.seen: set[tuple[str, tuple[str, ...]]] = set()
        self.queue: deque[tuple[str, tuple[str, ...]]] = deque()
        self.grounded: set[tuple[str, tuple[str, ...]]] = set()
        self.schemas = [_Schema.of(task, action) for action in task.domain.actions]
        self.triggers: dict[str, list[tuple[_Schema, int]]] = defaultdict(list)
        for schema in self.schemas:
            for index, atom in enumerate(schema.needs):
                self.triggers[atom[0]].append((schema, index))

    def over(self) -> bool:
        return self.count > self.limit or len(self.seen) > MAX_REACHED_FACTS

    def run(self) -> Reach:
        for predicate, args in self.task_init():
            self.reach(predicate, args)
        for schema in self.schemas:
            if not schema.needs:
                self.complete(schema, {})
        while self.queue and not self.over():
            predicate, args = self.queue.popleft()
            self.facts[predicate].add(args)
            for position, value in enumerate(args):
                self.by_value[(predicate, position, value)].append(args)
            for schema, index in self.triggers.get(predicate, []):
                binding = _match(schema.needs[index][1], args, {})
                if binding is not None:
                    rest = [a for i, a in enumerate(schema.needs) if i != index]
                    self.join(schema, rest, binding)
                if self.over() or self.steps_left <= 0:
                    break
            if self.steps_left <= 0:
                return Reach(self.count, decided=self.over())
        return Reach(self.count, decided=True)

    def task_init(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        for atom in self.task.init_atoms:
            yield str(atom.predicate), tuple(str(a) for a in atom.args)

    def reach(self, predicate: str, args: tuple[str, ...]) -> None:
        key = (predicate, args)
        if key not in self.seen:
            self.seen.add(key)
            self.queue.append(key)

    def join(self, schema: _Schema, rest: Sequence[_Needed], binding: dict[str, str]) -> None:
        if self.over() or self.steps_left <= 0:
            return
        if not rest:
            self.complete(schema, binding)
            return
        # the atom with the most bound arguments first: the fewest candidates
        best = max(range(len(rest)), key=lambda i: sum(a in binding for a in rest[i][1]))
        predicate, pattern = rest[best]
        remaining = [a for i, a in enumerate(rest) if i != best]
        bound = [
            self.by_value.get((predicate, i, binding.get(name, name)), [])
            for i, name in enumerate(pattern)
            if not name.startswith("?") or name in binding
        ]
        candidates = min(bound, key=len) if bound else self.facts.get(predicate, set())
        for args in list(candidates):
            self.steps_left -= 1
            extended = _match(pattern, args, binding)
            if extended is not None:
                self.join(schema, remaining, extended)
            if self.over() or self.steps_left <= 0:
                return

    def complete(self, schema: _Schema, binding: dict[str, str]) -> None:
        for name, allowed in schema.domains.items():
            if name in binding and binding[name] not in allowed:
                return
        free = [name for name in schema.order if name not in binding]
        if not free:  # the usual case: every parameter is in a precondition
            self.ground(schema, binding)
            return
        if self.count + math.prod(len(schema.domains[n]) for n in free) > self.limit:
            self.count = self.limit + 1  # every completion is reachable: past the bound
            return
        for values in _product([sorted(schema.domains[n]) for n in free]):
            self.ground(schema, {**binding, **dict(zip(free, values, strict=True))})
            if self.over():
                return

    def ground(self, schema: _Schema, full: dict[str, str]) -> None:
        self.steps_left -= 1
        if schema.equal and not schema.allows(full):
            return
        key = (schema.name, tuple([full[n] for n in schema.order]))
        if key in self.grounded:
            return
        self.grounded.add(key)
        self.count += 1
        for predicate, pattern in schema.plain_adds:
            self.reach(predicate, tuple([full.get(t, t) for t in pattern]))
        if schema.other_adds:
            for predicate, args in _adds(self.task, schema.other_adds, full):
                self.reach(predicate, args)


def _product(domains: list[list[str]]) -> Iterator[tuple[str, ...]]:
    if not domains:
        yield ()
        return
    first, *others = domains
    for value in first:
        for rest in _product(others):
            yield (value, *rest)


_Needed = tuple[str, tuple[str, ...]]


def _match(
    pattern: tuple[str, ...], args: tuple[str, ...], binding: dict[str, str]
) -> dict[str, str] | None:
    """`binding` extended so that `pattern` (`?vars` and constants) reads `args`."""
    if len(pattern) != len(args):
        return None
    extended = binding
    for name, value in zip(pattern, args, strict=True):
        if name.startswith("?"):
            bound = extended.get(name)
            if bound is None:
                if extended is binding:
                    extended = dict(binding)
                extended[name] = value
            elif bound != value:
                return None
        elif name != value:
            return None
    return extended


@dataclass
class _Schema:
    """An action as the exploration reads it: positive literal preconditions to join,
    equality tests, parameter domains, and every atom its effects may add."""

    name: str
    order: list[str]
    domains: dict[str, set[str]]
    needs: list[_Needed]
    equal: list[tuple[str, str, bool]]
    plain_adds: list[_Needed]
    other_adds: list[Any]

    @classmethod
    def of(cls, task: PlanningTask, action: Any) -> _Schema:
        order = [str(v) for v in action.parameters]
        domains = {str(v): set(_parameter_objects(task, v)) for v in action.parameters}
        needs: list[_Needed] = []
        equal: list[tuple[str, str, bool]] = []
        for part in conjuncts_of(action.precondition):
            if isinstance(part, Predicate):
                needs.append((str(part.name), tuple(str(t) for t in part.terms)))
            elif isinstance(part, EqualTo):
                equal.append((str(part.left), str(part.right), True))
            elif isinstance(part, Not) and isinstance(part.argument, EqualTo):
                equal.append((str(part.argument.left), str(part.argument.right), False))
        plain_adds: list[_Needed] = []
        other_adds: list[Any] = []
        for part in conjuncts_of(action.effect):
            if isinstance(part, Predicate):
                plain_adds.append((str(part.name), tuple(str(t) for t in part.terms)))
            elif isinstance(part, When | Forall):
                other_adds.append(part)
        return cls(str(action.name), order, domains, needs, equal, plain_adds, other_adds)

    def allows(self, binding: dict[str, str]) -> bool:
        return all(
            (binding.get(left, left) == binding.get(right, right)) == same
            for left, right, same in self.equal
        )


def _adds(task: PlanningTask, effect: Any, binding: dict[str, str]) -> Iterator[_Needed]:
    """Every atom an effect may add when bound (conditions ignored, `forall` spread)."""
    for part in effect if isinstance(effect, list) else conjuncts_of(effect):
        if isinstance(part, Predicate):
            yield str(part.name), tuple(binding.get(str(t), str(t)) for t in part.terms)
        elif isinstance(part, When):
            yield from _adds(task, part.effect, binding)
        elif isinstance(part, Forall):
            variables = sorted(part.variables, key=str)
            domains = [_parameter_objects(task, v) for v in variables]
            for values in _product(domains):
                inner = {**binding, **{str(v): x for v, x in zip(variables, values, strict=True)}}
                yield from _adds(task, part.effect, inner)


def reachable_action_count(task: PlanningTask, limit: int, steps: int = EXPLORATION_STEPS) -> Reach:
    """Ground actions reachable in the relaxed task, counted until past `limit`."""
    return _Explorer(task, limit, steps).run()


def check_grounding(task: PlanningTask, limit: int = MAX_GROUND_ACTIONS) -> int:
    """The task's ground action count (reachable ones, when the product of counts is
    past `limit`); LimitError when more than `limit` are reachable (0: no limit), or
    when its negated conditions would list more facts than `MAX_COMPLEMENT_FACTS` (a
    negated goal grounds no action, yet its STRIPS copy lists objects^arity facts).
    A task beyond STRIPS is not compiled here: Fast Downward reads it in its own
    capped process."""
    with contextlib.suppress(ValueError):
        check_complements(task)
    product = ground_action_count(task)
    if not limit or product <= limit:
        return product
    reach = reachable_action_count(task, limit)
    if reach.actions <= limit:
        return reach.actions
    worst = max(task.actions, key=lambda a: _action_product(task, a))
    arity = len(task.parameter_types(worst))
    raise LimitError(
        f"refused to plan: more than {limit:,} of its ground actions are reachable, over "
        f"the limit of {limit:,} (the problem grounds {product:,} actions before pruning; "
        f"action {worst!r} has {arity} parameters over {len(task.objects)} objects)",
        hint="fewer parameters per action or fewer objects; a task of this project "
        "grounds a few thousand",
    )


def out_of_memory_message(memory_mb: int, peak_mb: float | None = None) -> str:
    """What a planner that hit its memory budget says."""
    peak = f", peak {peak_mb:.0f} MB" if peak_mb else ""
    return (
        f"the planner ran out of its {memory_mb} MB memory budget{peak}: the problem "
        "grounds too many actions or states; plan with fewer objects or simpler actions"
    )
