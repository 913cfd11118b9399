"""Inner Monologue (Huang et al., CoRL 2022): closed-loop planning with feedback in text.

The planner is SayCan's, which Inner Monologue builds on: the model never writes free
text that must be parsed; every skill the robot has is scored as the continuation of the
monologue, log P(skill | prompt) from the model's token log-probabilities
(`cowp_ros.bench.skill_scoring`), and the robot does the best-scored skill among
those it can do now (SayCan's affordance: the step's preconditions hold in the state the
robot believes it is in, after its own successful steps). There is no rule against
stepping back to a state the robot was in before: neither paper has one, and with it
pour_coke could not be done at all (0 of 20 test trials), since putting a held object
down and taking another returns to a believed state. The step budget below ends a loop.
"done" is not offered: the trial ends by itself when the goal holds, and on the dev
tasks the two-token "done" out-scored every longer skill (SayCan's sum of
log-probabilities favours short skills) before the first step or right after it.

The skills are the admissible actions (`_common`): the task's actions over the objects
present, plus one-argument swaps to another object of the same kind of thing, which is
how the robot can use a bowl as a cup. The swaps are offered once something went wrong
(a step failed, or the robot perceived a situation): a robot uses the objects its task
names until then. On the dev tasks, with the swaps always offered, the short swapped
skills ("find the faucet" as a table, "open the outlet" as a cupboard) out-scored the
task's own steps, and each is a stand-in nobody needed, which fails the trial.

The monologue carries Inner Monologue's three kinds of feedback:

* success detection: "Success: yes." / "Success: no." after every step the robot did
  or failed;
* passive scene description: "Scene: <the kinds of object present>." at the start;
* active scene description: what the robot perceives about the situation ("Scene: the
  cup is dirty."). A situation is seen before a step, which is then not attempted: the
  scene line takes the step's place, with no success line, so a harmless remark ("the
  plate is blue") is never logged as a failure; the model then chooses again, the same
  step or another.

One demonstration episode (a task outside the benchmark) shows the format, including a
failure, putting the failed object down, and a recovery with another object; the
domain's solved dev tasks (`_demonstrations`; a dev task never sees itself) follow as
monologues without a situation, which show the robot's own granularity of steps (on the
dev tasks, without them, the model placed the cup on the shelf before filling it). It stops
when the goal is reached or after `3 * closed-world plan length + 6` actions.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import Admissible, BelievedState, admissible_actions
from cowp_ros.bench.methods._demonstrations import Demonstration, demonstrations_for
from cowp_ros.bench.skill_scoring import best_skill
from cowp_ros.bench.view import Episode
from cowp_ros.errors import CowpError
from cowp_ros.tasks.phrases import ActionPhrases, noun, object_type

DEMONSTRATION = (
    "Task: watering the plant on the desk.\n"
    "Scene: watering can, jug, faucet, desk, plant, spoon, shelf.\n"
    "Robot: find the watering can.\n"
    "Success: yes.\n"
    "Robot: grasp the watering can.\n"
    "Success: yes.\n"
    "Scene: the watering can is leaking.\n"
    "Robot: fill the watering can with water from the faucet.\n"
    "Success: no.\n"
    "Robot: put the watering can down on the shelf.\n"
    "Success: yes.\n"
    "Robot: find the jug.\n"
    "Success: yes.\n"
    "Robot: grasp the jug.\n"
    "Success: yes.\n"
    "Robot: fill the jug with water from the faucet.\n"
    "Success: yes.\n"
    "Robot: water the plant on the desk with the jug.\n"
    "Success: yes.\n"
    "Robot: done.\n"
)
"""Written for this benchmark from a task outside it. The situation line comes right
before the step it was raised at, as the world raises it."""


def episode_text(example: Demonstration) -> str:
    """A solved task of the domain as a monologue: every step a success."""
    kinds = sorted(
        {noun(object_type(o, example.problem), "") for o in example.problem.problem_object_names}
    )
    lines = [f"Task: {example.description}.", f"Scene: {', '.join(kinds)}."]
    for sentence in example.sentences:
        lines += [f"Robot: {sentence}.", "Success: yes."]
    return "\n".join([*lines, "Robot: done."]) + "\n"


class InnerMonologue:
    name = "inner_monologue"
    label = "Inner Monologue"
    uses_llm = True
    summary = "closed loop: LLM scores the robot's skills (SayCan) with scene and success feedback"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("Inner Monologue needs a language model")
        if not callable(getattr(context.model, "next_tokens", None)):
            raise CowpError(
                "Inner Monologue scores skills with token log-probabilities, which this "
                "language model client does not give",
                hint="use the embedded model or an OpenAI-compatible server with /v1/completions",
            )
        self.context = context
        self.model = context.model
        self.monologue: list[str] = []
        self.calls: list[int] = []
        self.examples = (
            DEMONSTRATION
            + "\n"
            + "".join(
                episode_text(d) + "\n" for d in demonstrations_for(context.spec, context.planner)
            )
        )

    def header(self, episode: Episode) -> str:
        task = episode.problem
        kinds = sorted({noun(object_type(o, task), "") for o in episode.scene()})
        return f"Task: {self.context.spec.description}.\nScene: {', '.join(kinds)}.\n"

    def run(self, episode: Episode) -> None:
        task = episode.problem
        phrases = ActionPhrases(self.context.spec.phrases)
        skills = admissible_actions(task, phrases)
        believed = BelievedState(task)
        header = self.header(episode)
        plan = self.context.planner.solve(task, 60.0)
        budget = 3 * len(plan.steps) + 6 if plan.found else 30
        for _ in range(budget):
            choice = self._choose(header, skills, believed)
            if choice is None:
                episode.give_up("no skill can be done now")
                return
            outcome = episode.execute(choice.step)
            if episode.finished:
                self.monologue.append(f"Robot: {choice.text}.")
                return
            if outcome.situation is not None:
                # Seen before the step, which was not attempted: a scene line, no verdict.
                self.monologue.append(f"Scene: {outcome.situation.strip().rstrip('.')}.")
                continue
            self.monologue.append(f"Robot: {choice.text}.")
            if outcome.executed:
                believed.apply(choice.step)
            self.monologue.append(f"Success: {'yes' if outcome.executed else 'no'}.")
        episode.give_up("out of steps")

    def _choose(
        self, header: str, skills: list[Admissible], believed: BelievedState
    ) -> Admissible | None:
        """The best-scored skill the robot can do now; None when it can do none."""
        trouble = any(m.startswith("Scene: ") or m == "Success: no." for m in self.monologue)
        possible = [s for s in skills if (trouble or not s.swapped) and believed.affords(s.step)]
        if not possible:
            return None
        prompt = self.examples + header + "".join(f"{m}\n" for m in self.monologue)
        options = [f" {s.text}." for s in possible]
        scored = best_skill(self.model, prompt + "Robot:", options)  # type: ignore[arg-type]
        self.calls.append(scored.calls)
        return possible[scored.index]

    def trace(self) -> list[str]:
        """The monologue as the model saw it, and the model calls each choice cost."""
        return [*self.monologue, f"model calls per choice: {self.calls}"]


METHOD = InnerMonologue
