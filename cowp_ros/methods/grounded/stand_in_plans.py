"""What the domain itself says about a stand-in, before any question: the plan it allows.

A name says little about function: "a towel" is closer in meaning to "a vacuum" than
"a broom" is, and a 1.5B model gives the broom a lower P(yes) in the vacuum's role than
a basket. The domain knows better. Put a kind in the role (a copy of each of the role's
actions, as the loop would add) and plan:

- **no plan**: the kind cannot do what the role needs here, whatever its name (in a
  power outage every copy of the powered cleaning keeps the outage's precondition, and
  a towel has no way to clean by hand): it is not asked about at all;
- **a plan**: the role's actions it uses are the only ones worth asking about ("grasp
  a broom", "sweep the area with a broom"; not "plug a broom into the outlet");
- **vouched for**: the plan relies on a fact the domain states about the kind's
  object and no action changes, named in a precondition of the role's action
  (`(manual broom_1)` for sweeping): the domain's author has said the kind can do that
  job, so its name need not convince the model.

`plan_with` answers this for one kind; `FrugalAcquirer` uses it to order and narrow its
questions.
"""

from __future__ import annotations

from dataclasses import dataclass

from cowp_ros.cowp.roles import role_actions
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.pddl.formulas import top_literals
from cowp_ros.pddl.model import Atom, atom_of
from cowp_ros.planning import Planner, PlanStatus, PlanStep


@dataclass(frozen=True)
class StandInPlan:
    """A kind's plan in a role: the role's actions it uses, in plan order, and the
    static facts about the kind's objects it relies on (empty: not vouched for)."""

    kind: str
    actions: tuple[str, ...]
    vouched_by: tuple[str, ...] = ()

    @property
    def vouched(self) -> bool:
        return bool(self.vouched_by)


def static_predicates(task: PlanningTask) -> frozenset[str]:
    """Predicates no action's effect mentions: what the problem states of them stays."""
    changed = {
        atom_of(literal.predicate).predicate
        for name in task.actions
        for literal in top_literals(task.action(name).effect)
    }
    mentioned = {
        atom_of(literal.predicate).predicate
        for name in task.actions
        for literal in top_literals(task.action(name).precondition)
    }
    return frozenset(mentioned - changed)


def plan_with(
    task: PlanningTask,
    planner: Planner,
    role_type: str,
    kind: str,
    timeout_s: float,
    vouching: frozenset[str] | None = None,
) -> StandInPlan | None:
    """The plan `kind` allows in `role_type`'s role (None: no plan; a planner that ran
    out of time says nothing, so the kind keeps every action, unvouched). `vouching`:
    the role's `vouching_predicates`, when the caller has them already."""
    if vouching is None:
        vouching = vouching_predicates(task, role_type)
    probe = task
    variants: dict[str, str] = {}
    for action in role_actions(task, role_type):
        try:
            probe, variant = edits.add_action_variant(probe, action, role_type, kind)
        except edits.PddlEditError:  # a copy the domain cannot take: the plan goes without
            continue
        variants[variant] = action
    result = planner.solve(probe.validated(), timeout_s)
    if not result.found:
        if result.status is PlanStatus.TIMEOUT:
            return StandInPlan(kind, tuple(variants.values()))
        return None
    used = [s for s in result.steps if s.action in variants]
    actions = tuple(dict.fromkeys(variants[s.action] for s in used))
    vouched = tuple(
        dict.fromkeys(str(a) for s in used for a in _static_facts(probe, s, kind, vouching))
    )
    return StandInPlan(kind, actions or tuple(variants.values()), vouched)


def vouching_predicates(task: PlanningTask, role_type: str) -> frozenset[str]:
    """The static predicates the role's actions ask of the role's own parameter
    (`manual` for sweeping with the vacuum's role): the only ones that can vouch."""
    static = static_predicates(task)
    found = set()
    for name in role_actions(task, role_type):
        action = task.action(name)
        ours = {
            str(p)
            for p, t in zip(action.parameters, task.parameter_types(name), strict=True)
            if t == role_type
        }
        for literal in top_literals(action.precondition):
            atom = atom_of(literal.predicate)
            if literal.positive and atom.predicate in static and ours & set(atom.args):
                found.add(atom.predicate)
    return frozenset(found)


def may_be_vouched(task: PlanningTask, kind: str, predicates: frozenset[str]) -> bool:
    """Does the problem state one of `predicates` of an object of `kind`? (Cheap: only
    such kinds need a plan to find out whether the domain vouches for them.)"""
    return any(
        atom.predicate in predicates and any(task.objects.get(a) == kind for a in atom.args)
        for atom in task.init_atoms
    )


def _static_facts(
    task: PlanningTask, step: PlanStep, kind: str, static: frozenset[str]
) -> list[Atom]:
    """The facts of the `static` predicates about `step`'s objects of `kind` that its
    preconditions ask for and the problem states."""
    action = task.action(step.action)
    names = [str(p) for p in action.parameters]
    binding = dict(zip(names, step.args, strict=True))
    ours = {a for a in step.args if task.objects.get(a) == kind}
    found = []
    for literal in top_literals(action.precondition):
        atom = atom_of(literal.predicate)
        if not literal.positive or atom.predicate not in static:
            continue
        ground = Atom(atom.predicate, tuple(binding.get(a, a) for a in atom.args))
        if ours & set(ground.args) and ground in task.init_atoms:
            found.append(ground)
    return found
