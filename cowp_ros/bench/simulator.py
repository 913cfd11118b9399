"""A symbolic world that executes plan steps, raises situations, and decides success.

The world is the task's own domain (never a method's edited copy) over the objects
present in the trial. A step is done if its base action exists (an acquired variant
such as `fill_cup__cup_as_bowl` is its base action `fill_cup` done with a bowl), its
objects are present and usable, the action is not blocked, and the base action's
preconditions hold with those objects. Success is the goal holding in the world state,
and no step having used an object people would not accept in its role (the judge).

Situations are drawn per trial in advance (`runner.draw_trial`), so every method faces
the same ones: each is due at a base action, and is raised the first time a method
attempts a step of that action. Raising it means the robot sees the sentence before the
step, and the step is not done; the situation's effect then holds (see `Effect`): a
disabled object is unusable from then on, and the very step the situation was raised at
cannot be done either (dirty water reported at "place the cup" spoils that step even
though the faucet, the object disabled, is not one of its arguments). A
distractor is a sentence that changes nothing; if the method's next attempt is not the
same step, or it gives up right after, the distractor changed the plan: a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cowp_ros.bench.annotations import Effect, SituationEffect, TaskAnnotation
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import base_action_name, precondition_literals
from cowp_ros.pddl.formulas import literals_of
from cowp_ros.pddl.model import atom_of
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import TaskSpec


@dataclass(frozen=True)
class ScheduledEvent:
    """A sentence the world raises at the first attempt of a step of `action`.

    `kind` is "situation" (from the dataset, with its effect) or "distractor" (benign).
    `at` is the index of the reference-plan step it was drawn for, for the record, and
    `reported_at` that step's objects ("" when unknown: every step of `action` counts).
    """

    kind: str
    key: str
    text: str
    action: str
    at: int
    effect: SituationEffect | None = None
    about: str = ""  # the dataset's object word ("cup", "power"), for per-object results
    reported_at: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "key": self.key,
            "text": self.text,
            "action": self.action,
            "at": self.at,
            "object": self.about,
        }
        if self.effect is not None:
            data["effect"] = self.effect.effect.value
            data["target"] = self.effect.target
            data["rule"] = self.effect.rule
        return data


@dataclass(frozen=True)
class StepOutcome:
    """What the robot learns from one attempt.

    `executed`: the step was done. `situation`: a sentence the robot saw before the step
    (then the step was not done; the method decides what to do). `reason`: why a step
    failed, in words a robot's own failure detection could give ("the step failed").
    """

    executed: bool
    situation: str | None = None
    reason: str = ""


@dataclass
class _Watch:
    event: ScheduledEvent
    step: PlanStep


@dataclass
class EpisodeRecord:
    """What happened, for the results: outcome, fired events, unacceptable steps."""

    completed: bool = False
    goal_reached: bool = False
    gave_up: str = ""
    exhausted: bool = False
    attempts: int = 0
    executed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    fired: list[dict[str, Any]] = field(default_factory=list)
    unacceptable: list[str] = field(default_factory=list)
    substitutions: list[str] = field(default_factory=list)
    distractor_failures: list[str] = field(default_factory=list)
    judgements: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Episode:
    """One method's run of one trial: the robot's whole interface to the world."""

    def __init__(
        self,
        spec: TaskSpec,
        world: PlanningTask,
        events: tuple[ScheduledEvent, ...],
        annotation: TaskAnnotation,
        *,
        max_attempts: int,
    ) -> None:
        self.spec = spec
        self.annotation = annotation
        self._world = world
        self._state: set[Atom] = set(world.init_atoms)
        self._pending = sorted(events, key=lambda e: (e.at, e.kind != "distractor"))
        self._unusable: dict[str, str] = {}
        self._blocked: dict[str, str] = {}
        self._blocked_steps: dict[PlanStep, str] = {}
        self._judged: dict[tuple[str, str], bool] = {}
        self._watch: _Watch | None = None
        self.max_attempts = max_attempts
        self.record = EpisodeRecord()
        self.observations: list[str] = []

    # ---- what the robot knows -----------------------------------------------------

    @property
    def problem(self) -> PlanningTask:
        """The task as the robot knows it at the start: domain, objects present, state."""
        return self._world

    def scene(self) -> list[str]:
        """Passive scene description: the objects present, by name."""
        return sorted(self._world.problem_object_names)

    @property
    def finished(self) -> bool:
        r = self.record
        return r.goal_reached or bool(r.gave_up) or r.exhausted

    @property
    def goal_reached(self) -> bool:
        return self.record.goal_reached

    # ---- what the robot does ------------------------------------------------------

    def give_up(self, reason: str) -> None:
        """The method stops: no solution (or it cannot go on)."""
        if self.finished:
            return
        if self._watch is not None:
            self._distractor_failed("gave up right after it")
        self.record.gave_up = reason or "gave up"

    def execute(self, step: PlanStep) -> StepOutcome:
        """Attempt one step; see the module docstring for what can happen."""
        if self.finished:
            return StepOutcome(False, None, "the episode is over")
        record = self.record
        record.attempts += 1
        if record.attempts > self.max_attempts:
            record.exhausted = True
            return StepOutcome(False, None, "out of attempts")
        if self._watch is not None:
            if step != self._watch.step:
                self._distractor_failed(f"the next step was {step}, not {self._watch.step}")
            self._watch = None
        base = base_action_name(step.action)
        event = next((e for e in self._pending if e.action == base), None)
        if event is not None:
            self._pending.remove(event)
            self._fire(event, step)
            return StepOutcome(False, event.text, "")
        why = self._why_not(step, base)
        if why:
            record.failed.append(f"{step}: {why}")
            return StepOutcome(False, None, "the step failed")
        self._apply(step, base)
        record.executed.append(str(step))
        if self._world.goal_atoms <= self._state:
            record.goal_reached = True
            record.completed = not record.unacceptable
        return StepOutcome(True)

    # ---- the world's rules --------------------------------------------------------

    def _fire(self, event: ScheduledEvent, step: PlanStep) -> None:
        self.observations.append(event.text)
        self.record.fired.append({**event.to_dict(), "before": str(step)})
        if event.kind == "distractor":
            self._watch = _Watch(event, step)
            return
        effect = event.effect
        assert effect is not None
        self.annotation.count(effect.rule)
        self.record.judgements.append(f"effect {effect.effect.value} by {effect.rule}")
        if effect.effect is Effect.DISABLES_OBJECT and effect.target is not None:
            self._unusable[effect.target] = event.text
            if not event.reported_at or tuple(step.args) == event.reported_at:
                # The step it was reported at, too ("the water is dirty" at place_cup:
                # the faucet is the target, and the cup now holds dirty water). Not a
                # step with other objects: after a cup took the glass's role, "the glass
                # falls down" does not stop the robot placing the cup.
                self._blocked_steps[step] = event.text
        elif effect.effect is Effect.BEYOND_SKILLS:
            self._blocked[event.action] = event.text

    def _distractor_failed(self, how: str) -> None:
        assert self._watch is not None
        self.record.distractor_failures.append(f"{self._watch.event.text!r}: {how}")
        self._watch = None

    def _why_not(self, step: PlanStep, base: str) -> str:
        world = self._world
        if base not in world.actions:
            return f"no such action {base}"
        params = world.action(base).parameters
        if len(step.args) != len(params):
            return f"{base} takes {len(params)} objects"
        missing = [a for a in step.args if a not in world.objects]
        if missing:
            return f"not present: {', '.join(missing)}"
        if base in self._blocked:
            return f"cannot: {self._blocked[base]}"
        if step in self._blocked_steps:
            return f"cannot: {self._blocked_steps[step]}"
        spoiled = [a for a in step.args if a in self._unusable]
        if spoiled:
            return f"{spoiled[0]} is unusable: {self._unusable[spoiled[0]]}"
        mapping = {str(v): a for v, a in zip(params, step.args, strict=True)}
        for literal in precondition_literals(world, base):
            holds = _ground(literal.atom, mapping) in self._state
            if holds != literal.positive:
                return f"precondition {'' if literal.positive else 'not '}{literal.atom} fails"
        types = world.parameter_types(base)
        for role_type, arg in zip(types, step.args, strict=True):
            used_type = world.objects[arg]
            if world.is_subtype(used_type, role_type):
                continue
            if world.types.get(used_type) != world.types.get(role_type):
                return f"{arg} cannot be used as a {role_type}"
            self._judge(role_type, used_type, step)
        return ""

    def _judge(self, role_type: str, used_type: str, step: PlanStep) -> None:
        key = (role_type, used_type)
        if key not in self._judged:
            accepted = self.annotation.acceptable_in_role(role_type, used_type)
            self._judged[key] = accepted
            self.record.substitutions.append(f"{used_type} as {role_type}")
            verdict = "acceptable" if accepted else "not acceptable"
            self.record.judgements.append(
                f"{used_type} as {role_type}: {verdict} by acceptable.{role_type}"
            )
        if not self._judged[key]:
            self.record.unacceptable.append(f"{step}: a {used_type} as the {role_type}")

    def _apply(self, step: PlanStep, base: str) -> None:
        action = self._world.action(base)
        mapping = {str(v): a for v, a in zip(action.parameters, step.args, strict=True)}
        effects = [(lit.positive, atom_of(lit.predicate)) for lit in literals_of(action.effect)]
        for positive, atom in effects:
            if not positive:
                self._state.discard(_ground(atom, mapping))
        for positive, atom in effects:
            if positive:
                self._state.add(_ground(atom, mapping))


def _ground(atom: Atom, mapping: Mapping[str, str]) -> Atom:
    return Atom(atom.predicate, tuple(mapping.get(a, a) for a in atom.args))
