"""Inner Monologue (Huang et al., CoRL 2022): closed-loop planning with feedback in text.

Each step the model is shown the task, the robot's skills (the task's actions over the
kinds of object they take: SayCan, which Inner Monologue builds on, lets the model choose
only among skills), a passive scene description (the kinds of object present), and the
monologue so far: each action taken with success feedback
("Success: yes/no") and any situation the robot saw ("Scene: the cup is dirty."). It
writes the next action, which is mapped to the most similar admissible action (see
`_common`; the original scored a skill library with the LLM, SayCan-style), and the
robot does it. One demonstration episode (a task outside the benchmark) shows the
format, including a failure and a recovery with another object. It stops at "done",
when the goal is reached, or after `3 * closed-world plan length + 6` actions.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import admissible_actions, best_match
from cowp_ros.bench.simulator import Episode
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.tasks.phrases import ActionPhrases, noun, object_type

SYSTEM = (
    "You control a household robot. Given the task, its skills, the scene and what "
    "happened so far, write only the robot's next action in a few words, or 'done' when "
    "the task is done. Use the skills; another object in the scene may stand in for one "
    "that cannot be used."
)
DEMONSTRATION = (
    "Task: water the plant on the desk\n"
    "Skills: find the watering can; grasp the watering can; fill the watering can with "
    "water from the faucet; water the plant with the watering can.\n"
    "Scene: watering can, jug, faucet, desk, plant, spoon.\n"
    "Robot: find the watering can. Success: yes.\n"
    "Scene: the watering can is leaking.\n"
    "Robot: grasp the watering can. Success: no.\n"
    "Robot: find the jug. Success: yes.\n"
    "Robot: grasp the jug. Success: yes.\n"
    "Robot: fill the jug with water from the faucet. Success: yes.\n"
    "Robot: water the plant with the jug. Success: yes.\n"
    "Robot: done.\n"
)


def skills(task: PlanningTask, phrases: ActionPhrases) -> list[str]:
    """The task's own actions in words, over the kinds they take ("hold the cup")."""
    return [
        phrases.phrase(action, [noun(t) for t in task.parameter_types(action)])
        for action in sorted(task.actions)
        if action == base_action_name(action)
    ]


class InnerMonologue:
    name = "inner_monologue"
    label = "Inner Monologue"
    uses_llm = True
    summary = "closed loop: LLM picks each action from scene and success feedback"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("Inner Monologue needs a language model")
        self.context = context
        self.model = context.model
        self.monologue: list[str] = []

    def run(self, episode: Episode) -> None:
        spec = self.context.spec
        task = episode.problem
        phrases = ActionPhrases(spec.phrases)
        admissible = admissible_actions(task, phrases)
        kinds = sorted({noun(object_type(o, task), "") for o in episode.scene()})
        header = (
            f"Task: {spec.description}\nSkills: {'; '.join(skills(task, phrases))}.\n"
            f"Scene: {', '.join(kinds)}."
        )
        plan = self.context.planner.solve(task, 60.0)
        budget = 3 * len(plan.steps) + 6 if plan.found else 30
        for _ in range(budget):
            prompt = f"{DEMONSTRATION}\n{header}\n" + "".join(f"{m}\n" for m in self.monologue)
            text = self.model.complete(prompt + "Robot:", system=SYSTEM, max_tokens=16)
            line = text.strip().splitlines()[0] if text.strip() else ""
            line = line.removeprefix("Robot:").split("Success")[0].strip().rstrip(".")
            if not line or line.lower().startswith("done"):
                episode.give_up("the model said the task is done, but it is not")
                return
            match, _ = best_match(line, admissible)
            outcome = episode.execute(match.step)
            if episode.finished:
                return
            if outcome.situation is not None:
                self.monologue.append(f"Scene: {outcome.situation.strip().rstrip('.')}.")
                continue
            success = "yes" if outcome.executed else "no"
            self.monologue.append(f"Robot: {match.text}. Success: {success}.")
        episode.give_up("out of steps")


METHOD = InnerMonologue
