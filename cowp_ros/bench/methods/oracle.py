"""ORACLE: the ceiling. It knows what each raised situation does and which stand-ins pass.

Through its explicit privileged access (`cowp_ros.bench.privileged`; no other method
gets one) it reads, once a situation is raised, which objects it made unusable and
which actions it put beyond the robot's skills, and the judge's accepted stand-ins per
role and action. It never sees the situations still to come: it is the best a method
can do that reacts to what it observes.

It plans with the bench's planner over a compiled copy of the task: each parameter of
each action takes exactly the objects the world and the judge allow there (a release
step any held object; another step only usable objects of the role's kind, and, once
the role's own object is unusable, the kinds accepted for that action), written as
static `oracle_ok_<action>_<i>` facts. It keeps its plan while the plan still holds
under what it knows (a harmless situation changes nothing), and replans otherwise.
Where even it finds no plan, the situation is unsolvable in that trial; the pairs it
cannot solve with the whole house present are listed in the judge files (`unsolvable`).
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._restricted import compile_task, ok_atoms
from cowp_ros.bench.privileged import PrivilegedAccess
from cowp_ros.bench.view import RobotView
from cowp_ros.errors import CowpError
from cowp_ros.pddl import Atom, PlanningTask
from cowp_ros.pddl.edits import apply_action
from cowp_ros.planning import PlanStep
from cowp_ros.planning.replay import replay


class Knowledge:
    """What the oracle knows now: which object may take which parameter of which action."""

    def __init__(self, task: PlanningTask, access: PrivilegedAccess) -> None:
        self.task = task
        self.disabled = set(access.disabled())
        self.beyond = set(access.beyond_skills())
        self.release = set(access.release_actions())
        self.role_objects = access.role_objects()
        self.access = access
        self._accepted: dict[tuple[str, str], set[str]] = {}

    def accepted(self, role: str, action: str) -> set[str]:
        key = (role, action)
        if key not in self._accepted:
            self._accepted[key] = set(self.access.accepted_kinds(role, action))
        return self._accepted[key]

    def allowed(self, action: str, position: int, obj: str) -> bool:
        """May `obj` fill parameter `position` of `action`, by the world and the judge?"""
        task = self.task
        if action in self.beyond:
            return False
        role = task.parameter_types(action)[position]
        kind = task.objects[obj]
        if action in self.release:
            return task.is_subtype(kind, role)
        if obj in self.disabled:
            return False
        if task.is_subtype(kind, role):
            return True
        own = self.role_objects.get(role, ())
        needed = any(o in self.disabled for o in own) or any(
            role in task.parameter_types(a) for a in self.beyond if a in task.actions
        )
        return needed and kind in self.accepted(role, action)

    def ok_atoms(self, objects: Sequence[str]) -> set[Atom]:
        return ok_atoms(self.task, self, objects)


def still_holds(task: PlanningTask, plan: Sequence[PlanStep], knowledge: Knowledge) -> bool:
    """Does `plan` still reach the goal from `task`'s state under what is known now?"""

    def allowed(step: PlanStep) -> bool:
        return all(knowledge.allowed(step.action, i, a) for i, a in enumerate(step.args))

    return replay(task, plan, allowed)


class Oracle:
    name = "oracle"
    label = "ORACLE"
    uses_llm = False
    privileged = True
    summary = "ceiling: knows each raised situation's effect and the accepted stand-ins"

    def __init__(self, context: MethodContext) -> None:
        if context.privileged is None:
            raise CowpError("the oracle needs its privileged access (the runner gives it)")
        self.context = context
        self.access: PrivilegedAccess = context.privileged
        self.notes: list[str] = []

    def trace(self) -> list[str]:
        return list(self.notes)

    def run(self, episode: RobotView) -> None:
        task = episode.problem
        plan: list[PlanStep] = []
        failures = 0
        while not episode.finished:
            knowledge = Knowledge(task, self.access)
            if not plan or not still_holds(task, plan, knowledge):
                found = self._solve(task, knowledge)
                if found is None:
                    episode.give_up(self._why_stuck(knowledge))
                    return
                plan = found
            step = plan[0]
            outcome = episode.execute(step)
            if episode.finished:
                return
            if outcome.executed:
                failures = 0
                task = apply_action(task, step.action, step.args)
                plan = plan[1:]
            elif outcome.situation is not None:
                self.notes.append(f"saw: {outcome.situation}")
            else:
                failures += 1
                self.notes.append(f"{step} failed: {outcome.reason}")
                plan = []
                if failures >= 3:
                    episode.give_up(f"{step} failed {failures} times")
                    return

    def _solve(self, task: PlanningTask, knowledge: Knowledge) -> list[PlanStep] | None:
        compiled = compile_task(task, knowledge)
        result = self.context.planner.solve(compiled, 60.0)
        if not result.found:
            self.notes.append(f"no plan ({result.status.value})")
            return None
        plan = list(result.steps)
        self.notes.append("planned: " + ", ".join(str(s) for s in plan))
        return plan

    def _why_stuck(self, knowledge: Knowledge) -> str:
        parts = []
        if knowledge.disabled:
            parts.append("unusable: " + ", ".join(sorted(knowledge.disabled)))
        if knowledge.beyond:
            parts.append("beyond the robot's skills: " + ", ".join(sorted(knowledge.beyond)))
        return "oracle: no plan reaches the goal (" + ("; ".join(parts) or "nothing known") + ")"


METHOD = Oracle


def is_oracle(method_cls: type) -> bool:
    """Is this the oracle's own class object (not one named like it)? Only it is handed
    the privileged access to the judge."""
    return method_cls is Oracle
