"""Which (task, situation, step) pairs a method that knows every answer can solve.

Each pair is one trial with the whole house present (all objects, so that nothing is
missing by chance) and the one situation raised where the closed-world plan first meets
its step. The oracle runs it; a blocking pair it does not complete is unsolvable. The
judge files must list exactly those pairs, each with its reason (`unsolvable`), so that
"unsolvable" is a decision someone wrote down and reviewed, not an accident of a domain:
`check` names every pair on which the files and the oracle disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from cowp_ros.bench.annotations import TaskAnnotation
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.methods.oracle import Oracle
from cowp_ros.bench.runner import Trial, _cast, cast_of, classify, run_one, trial_seed
from cowp_ros.bench.schedule import ScheduledEvent
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import Planner
from cowp_ros.tasks import TaskSpec


@dataclass(frozen=True)
class Pair:
    """One situation at one step of one task, and what the oracle made of it."""

    task: str
    index: int
    text: str
    action: str
    weight: int  # the crowd's count of this situation at this step
    effect: str
    blocking: bool
    solved: bool
    declared: str  # the judge file's reason if it lists the pair as unsolvable, else ""
    outcome: str  # the oracle's give-up reason, or "completed"

    @property
    def agrees(self) -> bool:
        """The judge file and the oracle say the same about this pair."""
        if not self.blocking:
            return not self.declared
        return self.solved != bool(self.declared)

    def line(self) -> str:
        state = "harmless" if not self.blocking else ("solved" if self.solved else "UNSOLVED")
        declared = f" [declared {self.declared}]" if self.declared else ""
        return (
            f"{self.task} #{self.index} {self.text!r} at {self.action} (x{self.weight}): "
            f"{self.effect}, {state}{declared}; {self.outcome}"
        )


def pairs(
    spec: TaskSpec, dataset: SituationDataset, annotation: TaskAnnotation, planner: Planner
) -> list[Pair]:
    """Every (situation, step) pair of `spec`'s dataset task, run by the oracle."""
    problem = spec.load_house()  # every object present
    result = planner.solve(problem, 60.0)
    if not result.found:
        raise RuntimeError(f"{spec.name} has no closed-world plan with every object present")
    reference = tuple(result.steps)
    actions = [base_action_name(s.action) for s in reference]
    cast = cast_of(spec, problem, reference)
    found = []
    for situation in dataset.for_task(spec.dataset_id or 0):
        effect = annotation.effect_of(situation, spec)
        unsolvable = annotation.unsolvable.get(situation.index)
        for action, weight in situation.at_actions:
            if action not in actions or weight <= 0:
                continue
            at = actions.index(action)
            event = ScheduledEvent(
                "situation", situation.key, situation.text, action, at, effect, situation.object
            )
            events = classify([_cast(event, cast, annotation)], reference, spec)
            trial = Trial(spec.name, situation.index, trial_seed(0, spec.name, 0), problem,
                          reference, events, cast)  # fmt: skip
            record = run_one(Oracle, spec, trial, annotation, planner, None)
            blocking = events[0].blocking
            declared = unsolvable.reason if unsolvable and unsolvable.covers(action) else ""
            found.append(
                Pair(
                    spec.name,
                    situation.index,
                    situation.text,
                    action,
                    weight,
                    effect.effect.value,
                    blocking,
                    bool(record["completed"]),
                    declared,
                    "completed" if record["completed"] else record["episode"]["gave_up"],
                )
            )
    return found


def disagreements(found: list[Pair]) -> list[Pair]:
    """Pairs where the oracle and the judge file's `unsolvable` list disagree."""
    return [p for p in found if not p.agrees]
