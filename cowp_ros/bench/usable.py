"""Which of a trial's objects could take the role of an object a situation disabled.

The benchmark counts a blocking situation apart when nothing in the trial could handle
it (the oracle's "handled, an acceptable object present" figure, the understanding
score's `none_present`), and classes the others by what they need (a spare of the same
kind, or a stand-in of another kind). An object counts only when both hold:

- a person accepts it in the role: another object of the role's kind, or a kind the
  judge files accept there for some action of the task (a broom to grasp and sweep in
  the vacuum's place);
- the task can use it where it is. Location is what the task's own PDDL says it is,
  read from the trial's problem, not listed by hand: plate_to_sink grasps a plate only
  from the dining table (`(on ?p ?t)`, the table `located` in the room), so a clean
  plate elsewhere in the house is no spare; clean_area cleans the area `beside` its
  table, so another table is none; fill_cup and pour_coke serve at the goal's table,
  and fill_cup's faucet must supply water. Where a domain ties nothing to a place
  (set_table's plates are found in any cupboard, eat_burger's things anywhere), an
  object is found wherever it is, as the task's own objects are.

"The task can use it" is asked of the trial's problem from the state the reference
plan is in where the situation is raised: with the disabled objects out of use (but
for a release step: a broken plate still leaves the hand), the candidate the only
object in the role, and the other disabled roles open to their accepted kinds, is the
goal reachable? The question is answered by a delete-relaxed exploration, not a planner
call: a place in these domains is a static fact or the goal's own object, which the
relaxation keeps exactly, and what it drops (a hand that must be free) a release step
gives back. The oracle, which plans for real, then measures what a method could do
with those objects.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from cowp_ros.bench.annotations import Effect, TaskAnnotation
from cowp_ros.bench.schedule import ScheduledEvent
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import base_action_name, precondition_literals
from cowp_ros.pddl.formulas import top_literals
from cowp_ros.pddl.model import atom_of
from cowp_ros.planning import PlanStep
from cowp_ros.planning.replay import apply_effects, binding, ground


@dataclass(frozen=True)
class RoleTrial:
    """Who may fill which parameter when `candidate` is tried in `role` (a disabled
    object's kind): nothing disabled but in a release step, only the candidate in the
    role, and the judge's accepted kinds in every role whose own object is disabled."""

    task: PlanningTask
    annotation: TaskAnnotation
    release: frozenset[str]
    disabled: frozenset[str]
    role: str
    candidate: str

    def allowed(self, action: str, position: int, obj: str) -> bool:
        task = self.task
        role = task.parameter_types(action)[position]
        kind = task.objects[obj]
        if action in self.release:
            return task.is_subtype(kind, role)
        if obj in self.disabled:
            return False
        out = {task.objects[d] for d in self.disabled if d in task.objects}
        fits = task.is_subtype(kind, role) or (
            role in out and kind in self.annotation.accepted_kinds(role, action)
        )
        if role == self.role:
            return fits and obj == self.candidate
        return fits


def reaches_goal(task: PlanningTask, state: Collection[Atom], trial: RoleTrial) -> bool:
    """Is the goal reachable from `state`, deletes ignored, by ground actions whose
    every parameter `trial` allows?"""
    objects = sorted(task.problem_object_names | task.constants)
    pending: list[tuple[frozenset[Atom], frozenset[Atom]]] = []
    for name in task.actions:
        params = [str(v) for v in task.action(name).parameters]
        choices = [[o for o in objects if trial.allowed(name, i, o)] for i in range(len(params))]
        needs = [lit.atom for lit in precondition_literals(task, name) if lit.positive]
        adds = [
            atom_of(lit.predicate) for lit in top_literals(task.action(name).effect) if lit.positive
        ]
        for args in itertools.product(*choices):
            mapping = dict(zip(params, args, strict=True))
            pending.append(
                (
                    frozenset(ground(a, mapping) for a in needs),
                    frozenset(ground(a, mapping) for a in adds),
                )
            )
    reached = set(state)
    goal = task.goal_atoms
    grew = True
    while grew and not goal <= reached:
        grew = False
        waiting = []
        for needs_now, adds_now in pending:
            if needs_now <= reached:
                grew = grew or not adds_now <= reached
                reached |= adds_now
            else:
                waiting.append((needs_now, adds_now))
        pending = waiting
    return goal <= reached


def state_at(task: PlanningTask, reference: Sequence[PlanStep], at: int) -> set[Atom]:
    """The state the reference plan is in before its step `at`."""
    state = set(task.init_atoms)
    for step in reference[:at]:
        action = base_action_name(step.action)
        apply_effects(task, action, binding(task, action, step.args) or {}, state)
    return state


def alternatives(
    event: ScheduledEvent,
    problem: PlanningTask,
    reference: Sequence[PlanStep],
    annotation: TaskAnnotation,
    release: Collection[str],
) -> tuple[str, ...] | None:
    """The trial's objects a person would accept for the objects `event` disables and
    the task can use where they are (the module docstring); None when some disabled
    object has none. (A `beyond_skills` situation: () unless the judge files declare it
    unsolvable, then None.) The oracle's figure is read over the blocking situations
    with some; the others are counted apart."""
    effect = event.effect
    if event.kind != "situation" or effect is None or not event.blocking:
        return ()
    if effect.effect is not Effect.DISABLES:
        return None if event.unsolvable else ()
    disabled = frozenset(event.targets)
    state = state_at(problem, reference, event.at)
    found: list[str] = []
    for target in event.targets:
        role = problem.objects.get(target)
        if role is None:
            continue
        usable = [
            other
            for other in sorted(problem.problem_object_names)
            if other not in disabled
            and _acceptable(problem, annotation, role, problem.objects[other])
            and reaches_goal(
                problem,
                state,
                RoleTrial(problem, annotation, frozenset(release), disabled, role, other),
            )
        ]
        if not usable:
            return None
        found.extend(o for o in usable if o not in found)
    return tuple(found)


def _acceptable(task: PlanningTask, annotation: TaskAnnotation, role: str, kind: str) -> bool:
    """Another of the role's kind, or a kind the judge accepts in it for some action
    (looked up without counting: the judge's counts are of the judgements it made)."""
    return task.is_subtype(kind, role) or any(
        kind in annotation.accepted_kinds(role, action) for action in task.actions
    )
