"""A symbolic world that executes plan steps, raises situations, and judges the plan.

The world is the task's own domain (never a method's edited copy) over the objects
present in the trial. A step is done if its base action exists (an acquired variant
such as `fill_cup__cup_as_bowl` is its base action `fill_cup` done with a bowl), its
objects are present and usable, its action is not beyond the robot's skills now, and
the base action's preconditions hold with those objects.

Situations are drawn per trial in advance (`runner.draw_trial`), so every method faces
the same ones: each is due at a base action and is raised the first time a method
attempts a step of that action. Raising it means the robot sees the sentence before the
step, and that attempt is not done. A situation about objects that an earlier situation
already made unusable is moot where the robot has moved on: a step of its action that
puts other objects in their roles instead (a second vacuum after the first would not
turn on, a tray after the plate was not found) passes it by, as nobody tells a robot
turning on one vacuum that the vacuum it gave up on is not working. It stays due in case
the robot comes back to its objects, and counts as got past if the trial completes
(`schedule.moot`, `TrialWorld.passed`); the earlier situation has to have been handled
to get there, so no method dodges a situation by preferring other objects from the
start. Then its effect holds (`annotations.Effect`):

- `disables`: its objects are unusable from then on. A situation blocks only the steps
  that use one of its objects ("the plate is not found" raised before finding the
  cupboard does not stop the robot finding the cupboard), and a release step
  (`TaskSpec.release_actions`: putting a broken cup down) may still use them.
- `beyond_skills`: its action (the judge file's `action`, else the step it was raised
  at) fails for every object from then on.
- `no_effect`: nothing changes.

A blocking effect's harm is visible or silent (`annotations.Harm`). A visible one
(missing, broken, stuck) makes the steps it blocks fail, as the robot would see. A
silent one (dirty, contaminated, occupied, too hot) does not: the step succeeds, the
harm is recorded (`EpisodeRecord.silent_harms`, and as a harmful step) and the trial
fails, so only a method that understood the sentence avoids it. A perception or
navigation step (`find_*`, `walk*`: looking at a dirty cup, walking to a dirty table)
and a release step never do a silent harm.
A step that fails on a visible effect is put down to the situation behind it
(`EpisodeRecord.ran_into`, bookkept by `spoils.Spoils`): a method that went on as if "the
faucet is broken" meant nothing and replanned only when turning it on failed handled
the situation without understanding it, and the results count that apart.

The judge rates the plan, step by step (`_judge`): a stand-in (another kind of the same
parent type in a role) must be accepted for that action in the judge file, and is
needed only once a situation made the role's own task object unusable; an executed step
that fails either test is harmful, and a trial with a harmful step does not complete
even if the goal is reached. A second object of the role's own kind (`cup_2`) is never
judged: it is just another cup.

A harmless event (a distractor, or a dataset situation the trial's draw found to block
no step of the closed-world plan) is watched: if the method's next attempt is not the
same step, or it gives up right after, the harmless event changed the trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cowp_ros.bench.annotations import Effect, TaskAnnotation
from cowp_ros.bench.schedule import EventSchedule, ScheduledEvent
from cowp_ros.bench.spoils import Spoils
from cowp_ros.bench.view import Episode, RobotView, StepObservation, _Hooks
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import PlanStep
from cowp_ros.planning.replay import apply_effects, failed_precondition
from cowp_ros.tasks import TaskSpec

__all__ = [
    "Episode",
    "EpisodeRecord",
    "StepObservation",
    "TrialWorld",
    "senses_only",
]


def senses_only(action: str) -> bool:
    """A perception or navigation action (`find_*`, `walk*`): it does no silent harm."""
    return action.startswith(("find_", "walk"))


@dataclass
class EpisodeRecord:
    """What happened, for the results: outcome, fired events, the judge's verdicts."""

    completed: bool = False
    goal_reached: bool = False
    gave_up: str = ""
    exhausted: bool = False
    attempts: int = 0
    executed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    fired: list[dict[str, Any]] = field(default_factory=list)
    harmful: list[str] = field(default_factory=list)
    silent_harms: list[str] = field(default_factory=list)
    """Steps that succeeded with a harm only understanding could have avoided."""
    substitutions: list[str] = field(default_factory=list)
    changed_by_harmless: list[dict[str, str]] = field(default_factory=list)
    judgements: list[str] = field(default_factory=list)
    ran_into: list[str] = field(default_factory=list)
    """Keys of the situations a step failed on after they were raised: the method went
    on as if the sentence meant nothing and learnt otherwise from the failure."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Watch:
    event: ScheduledEvent
    step: PlanStep


class TrialWorld:
    """One method's run of one trial: the world's state, its rules and the judge."""

    def __init__(
        self,
        spec: TaskSpec,
        world: PlanningTask,
        events: tuple[ScheduledEvent, ...],
        annotation: TaskAnnotation,
        *,
        max_attempts: int,
        cast: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.annotation = annotation
        self._world = world
        self._state: set[Atom] = set(world.init_atoms)
        self._schedule = EventSchedule(events)
        self.spoils = Spoils()
        """What the raised situations spoiled (`spoils.Spoils`)."""
        self.disabled = self.spoils.disabled
        """Object -> the sentence that made it unusable."""
        self.beyond = self.spoils.beyond
        """Action -> the sentence that put it beyond the robot's skills."""
        self._judged: set[tuple[str, str, str, bool]] = set()
        self._watch: _Watch | None = None
        self._situations: list[str] = []
        self._done: list[PlanStep] = []
        self._history: list[tuple[PlanStep, StepObservation]] = []
        self.max_attempts = max_attempts
        self.record = EpisodeRecord()
        self.role_objects: dict[str, tuple[str, ...]] = {}
        """Role type -> the objects the trial's closed-world plan uses in it (`cast`)."""
        for name in spec.task_objects:
            kind = world.objects.get(name)
            if kind is not None:
                actual = (cast or {}).get(name, name)
                self.role_objects[kind] = (*self.role_objects.get(kind, ()), actual)

    def view(self) -> RobotView:
        """The robot's view of this world: all a method gets (see `cowp_ros.bench.view`)."""
        return RobotView(
            _Hooks(
                execute=self.execute,
                give_up=self.give_up,
                finished=lambda: self.finished,
                problem=lambda: self._world,
                situations=lambda: tuple(self._situations),
                history=lambda: tuple(self._history),
            )
        )

    # ---- what the robot knows -----------------------------------------------------

    @property
    def problem(self) -> PlanningTask:
        return self._world

    @property
    def state(self) -> frozenset[Atom]:
        return frozenset(self._state)

    @property
    def finished(self) -> bool:
        r = self.record
        return r.goal_reached or bool(r.gave_up) or r.exhausted

    # ---- what the robot does ------------------------------------------------------

    def give_up(self, reason: str) -> None:
        """The method stops: no solution (or it cannot go on)."""
        if self.finished:
            return
        if self._watch is not None:
            self._changed("gave up right after it")
        self.record.gave_up = reason or "gave up"

    def execute(self, step: PlanStep) -> StepObservation:
        """Attempt one step; see the module docstring for what can happen."""
        outcome = self._attempt(step)
        self._history.append((step, outcome))
        return outcome

    def _attempt(self, step: PlanStep) -> StepObservation:
        if self.finished:
            return StepObservation(False, None, "the episode is over")
        record = self.record
        record.attempts += 1
        if record.attempts > self.max_attempts:
            record.exhausted = True
            return StepObservation(False, None, "out of attempts")
        if self._watch is not None:
            watched = self._watch.step
            if step != watched and not self._blocked(watched):
                self._changed(f"the next step was {step}, not {watched}")
            self._watch = None
        base = base_action_name(step.action)
        event = self._schedule.take(
            step, self._world, self.disabled, len(self._done), len(record.failed)
        )
        if event is not None:
            self._fire(event, step)
            return StepObservation(False, event.text, "")
        why = self._why_not(step, base)
        if why:
            record.failed.append(f"{step}: {why}")
            cause = self.spoils.cause(step, self.spec.release_actions)
            if cause and cause not in record.ran_into:
                record.ran_into.append(cause)
            return StepObservation(False, None, "the step failed")
        self._judge_step(step, base)
        self._silent_harm(step, base)
        self._apply(step, base)
        record.executed.append(str(step))
        self._done.append(step)
        if self._world.goal_atoms <= self._state:
            record.goal_reached = True
            record.completed = not record.harmful
        return StepObservation(True)

    # ---- the world's rules --------------------------------------------------------

    def passed(self, key: str) -> bool:
        """Whether the situation `key` was passed by as moot (`schedule.moot`), never raised."""
        return self._schedule.passed(key)

    def _fire(self, event: ScheduledEvent, step: PlanStep) -> None:
        self._situations.append(event.text)
        self.record.fired.append({**event.to_dict(), "before": str(step)})
        if not event.blocking:
            self._watch = _Watch(event, step)
        if event.kind == "distractor":
            return
        effect = event.effect
        assert effect is not None
        self.annotation.count(effect.rule)
        self.record.judgements.append(f"effect {effect.effect.value} by {effect.rule}")
        if effect.effect is Effect.DISABLES:
            for target in event.targets:
                self.spoils.spoil(self.disabled, target, event.text, event.key, effect.silent)
        elif effect.effect is Effect.BEYOND_SKILLS:
            self.spoils.spoil(
                self.beyond, event.blocked_action, event.text, event.key, effect.silent
            )

    def _changed(self, how: str) -> None:
        assert self._watch is not None
        event = self._watch.event
        self.record.changed_by_harmless.append({"key": event.key, "text": event.text, "how": how})
        self._watch = None

    def _blocked(self, step: PlanStep) -> str:
        """Why a situation blocks `step` now ("" if none does)."""
        return self.spoils.why_blocked(step, self.spec.release_actions)

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
        blocked = self._blocked(step)
        if blocked:
            return blocked
        for role_type, arg in zip(world.parameter_types(base), step.args, strict=True):
            used_type = world.objects[arg]
            if not world.is_subtype(used_type, role_type) and world.types.get(
                used_type
            ) != world.types.get(role_type):
                return f"{arg} cannot be used as a {role_type}"
        mapping = {str(v): a for v, a in zip(params, step.args, strict=True)}
        literal = failed_precondition(world, base, mapping, self._state)
        if literal is not None:
            return f"precondition {'' if literal.positive else 'not '}{literal.atom} fails"
        return ""

    def _silent_harm(self, step: PlanStep, base: str) -> None:
        """A step done despite a silent effect: the harm is done (see the module doc)."""
        if base in self.spec.release_actions or senses_only(base):
            return
        causes = [self.beyond[base]] if base in self.beyond else []
        causes += [f"{a}: {self.disabled[a]}" for a in step.args if a in self.disabled]
        for cause in causes:
            harm = f"{step}: done though {cause}"
            self.record.silent_harms.append(harm)
            self.record.harmful.append(f"{harm} (a silent harm)")

    def how_handled(self, event: ScheduledEvent) -> str:
        """How the trial got past a raised blocking situation, from the steps done after it.

        `stand_in`: another kind of object took the role of an object it disabled, or a
        role of the action it put beyond the robot's skills (a broom sweeping in a power
        outage); `same_kind`: another object of a disabled object's kind did;
        `plan_change`: neither (another way to the goal). "" if it was never raised nor
        passed by as moot.
        """
        start = self._schedule.met_at(event.key)
        if start is None:
            return ""
        after = self._done[start:]
        world = self._world
        kinds = {world.objects[t] for t in event.targets if t in world.objects}
        effect = event.effect
        if effect is not None and effect.effect is Effect.BEYOND_SKILLS:
            blocked = event.blocked_action
            if blocked in world.actions:
                kinds |= set(world.parameter_types(blocked))
        how = "plan_change"
        for step in after:
            base = base_action_name(step.action)
            if base in self.spec.release_actions:
                continue
            for role, arg in zip(world.parameter_types(base), step.args, strict=True):
                if arg in event.targets or not any(world.is_subtype(k, role) for k in kinds):
                    continue
                if not world.is_subtype(world.objects[arg], role):
                    return "stand_in"
                if event.targets and any(world.objects[arg] == k for k in kinds):
                    how = "same_kind"
        return how

    def gave_up_rightly(self, event: ScheduledEvent) -> bool:
        """The method stopped, unharmed and explaining, after a situation no method can
        handle, without a failed step after it: it understood rather than ran into it."""
        record = self.record
        raised = self._schedule.raised_at.get(event.key)
        if raised is None or not event.unsolvable:
            return False
        failed_before = raised[1]
        return (
            bool(record.gave_up)
            and not record.gave_up.startswith("error:")
            and not record.harmful
            and not record.exhausted
            and len(record.failed) == failed_before
        )

    def stand_in_needed(self, role_type: str) -> bool:
        """A stand-in counts only once a situation made the role's own object unusable,
        or put an action of the role beyond the robot's skills (a power outage: the
        vacuum cannot clean, a broom can sweep)."""
        if any(o in self.disabled for o in self.role_objects.get(role_type, ())):
            return True
        world = self._world
        return any(role_type in world.parameter_types(a) for a in self.beyond if a in world.actions)

    def _judge_step(self, step: PlanStep, base: str) -> None:
        """Rate each stand-in of an executed step: accepted for this action, and needed."""
        world = self._world
        if base in self.spec.release_actions:
            return
        for role_type, arg in zip(world.parameter_types(base), step.args, strict=True):
            used_type = world.objects[arg]
            if world.is_subtype(used_type, role_type):
                continue
            accepted = self.annotation.accepts(role_type, used_type, base)
            needed = self.stand_in_needed(role_type)
            key = (role_type, used_type, base, needed)
            if key not in self._judged:
                self._judged.add(key)
                if f"{used_type} as {role_type}" not in self.record.substitutions:
                    self.record.substitutions.append(f"{used_type} as {role_type}")
                verdict = "acceptable" if accepted else "not acceptable"
                self.record.judgements.append(
                    f"{used_type} as {role_type} in {base}: {verdict}"
                    f"{'' if needed else ', not needed'} by stand_ins.{role_type}"
                )
            if not accepted:
                self.record.harmful.append(f"{step}: a {used_type} as the {role_type}")
            elif not needed:
                self.record.harmful.append(
                    f"{step}: a {used_type} as the {role_type}, though no situation made "
                    f"the {role_type} unusable"
                )

    def _apply(self, step: PlanStep, base: str) -> None:
        action = self._world.action(base)
        mapping = {str(v): a for v, a in zip(action.parameters, step.args, strict=True)}
        apply_effects(self._world, base, mapping, self._state)
