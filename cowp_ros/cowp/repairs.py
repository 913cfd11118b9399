"""The two ways the open-world loop repairs its PDDL, as plain functions.

- `block_step`: a situation makes a step unsuitable. Its fact joins the state and,
  negated, the step's action's preconditions, so no plan uses that action on that
  object while the fact holds ("(not (is_dirty ?c))" on grasp_cup).
- `add_stand_in`: a present kind of object can take a failed object's role. Each action
  of the role gets a copy for that kind (`grasp_cup` -> `grasp_cup_as_mug`).

Both edit through `pddl.edits`, tell each change as it is made (`loop_events`: the
report records it), and return the validated task. An edit the domain cannot take (a
user's domain has more than literals: a copy whose action cost names the role's object
has no cost for the new kind; a predicate that does not take the new kind) is told as
`EditSkipped`, with the construct and the action, and the run goes on without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cowp_ros.cowp.answers import SituationFact
from cowp_ros.cowp.loop_events import (
    ConstantMade,
    EditSkipped,
    FactAdded,
    LoopEvent,
    PreconditionAdded,
    VariantAdded,
)
from cowp_ros.pddl import Atom, Literal, PlanningTask, edits
from cowp_ros.planning import PlanStep

__all__ = ["Tell", "add_stand_in", "block_step"]

Tell = Callable[[LoopEvent], object]


def block_step(task: PlanningTask, step: PlanStep, fact: SituationFact, tell: Tell) -> PlanningTask:
    """`task` with the situation's fact stated and blocking `step`'s action.

    The precondition speaks of the step's own parameter when the fact is about one of
    its objects; a fact about another object names that object, which becomes a domain
    constant so the action may mention it; a fact about the world is negated as it is.
    """
    if fact.atom not in task.init_atoms:
        task = edits.add_fact(task, fact.atom)
        tell(FactAdded(fact.atom))
    if fact.subject is None:
        literal = Literal(fact.atom, positive=False)
    elif fact.subject in step.args:
        params = [str(v) for v in task.action(step.action).parameters]
        variable = params[step.args.index(fact.subject)]
        literal = Literal(Atom(fact.atom.predicate, (variable,)), positive=False)
    else:
        if fact.subject not in task.constants:
            task = edits.promote_to_constant(task, fact.subject)
            tell(ConstantMade(fact.subject, step.action))
        literal = Literal(fact.atom, positive=False)
    try:
        task = edits.add_precondition(task, step.action, literal)
    except edits.PddlEditError as err:
        tell(EditSkipped(step.action, "add_precondition", err.message))
        return task.validated()
    tell(PreconditionAdded(step.action, literal))
    return task.validated()


def add_stand_in(
    task: PlanningTask, actions: Sequence[str], role_type: str, new_type: str, tell: Tell
) -> tuple[PlanningTask, list[str]]:
    """`task` with a copy of each of `actions` in which `new_type` takes `role_type`'s
    role, and the copies' names, in the order of `actions` (a copy the domain cannot
    take is left out, and told)."""
    variants = []
    for action in actions:
        try:
            task, variant = edits.add_action_variant(task, action, role_type, new_type)
        except edits.PddlEditError as err:
            tell(EditSkipped(action, "add_action_variant", err.message))
            continue
        variants.append(variant)
        tell(VariantAdded(action, variant, role_type, new_type))
    return task.validated(), variants
