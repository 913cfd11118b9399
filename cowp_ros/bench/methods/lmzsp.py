"""Language Models as Zero-Shot Planners (LMZSP; Huang et al., ICML 2022).

The model writes the plan one step at a time in free text after one demonstration
("Task: ... Step 1: ..."); each step is translated to the most similar admissible
action and the translation, not the raw text, is appended to the prompt before the next
step, as in the paper. The original translated with sentence embeddings; we use string
and word similarity (see `_common`), with no embedding model. Generation stops at
"done", at a repeated step, or after `MAX_STEPS`.

The plan is then executed open loop: the robot does not react to what it sees. A step
that fails ends the run (the plan has no way to recover).
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import admissible_actions, best_match, execute_retrying
from cowp_ros.bench.simulator import Episode
from cowp_ros.errors import CowpError
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import ActionPhrases

MAX_STEPS = 12
SYSTEM = (
    "You are a household robot that plans tasks step by step. Continue the plan: write "
    "only the next step, in a few words, or 'done' when the task is finished."
)
DEMONSTRATION = (
    "Task: water the plant on the desk\n"
    "Step 1: find the watering can\n"
    "Step 2: grasp the watering can\n"
    "Step 3: fill the watering can with water from the faucet\n"
    "Step 4: walk to the desk\n"
    "Step 5: water the plant with the watering can\n"
    "Step 6: done\n"
)


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    if ":" in line and line.lower().startswith("step"):
        line = line.split(":", 1)[1]
    return line.strip().rstrip(".")


class ZeroShotPlanner:
    name = "lmzsp"
    label = "LMZSP"
    uses_llm = True
    summary = "LLM writes the plan step by step, mapped to admissible actions; open loop"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("LMZSP needs a language model")
        self.context = context
        self.model = context.model
        self.plan: list[PlanStep] = []
        self.raw: list[str] = []

    def write_plan(self, episode: Episode) -> list[PlanStep]:
        spec = self.context.spec
        admissible = admissible_actions(episode.problem, ActionPhrases(spec.phrases))
        lines = [f"Task: {spec.description}"]
        plan: list[PlanStep] = []
        for number in range(1, MAX_STEPS + 1):
            prompt = f"{DEMONSTRATION}\n" + "\n".join(lines) + f"\nStep {number}:"
            text = first_line(self.model.complete(prompt, system=SYSTEM, max_tokens=16))
            self.raw.append(text)
            if not text or text.lower().startswith("done"):
                break
            match, _ = best_match(text, admissible)
            if plan and match.step == plan[-1]:
                break
            plan.append(match.step)
            lines.append(f"Step {number}: {match.text}")
        return plan

    def run(self, episode: Episode) -> None:
        self.plan = self.write_plan(episode)
        for step in self.plan:
            outcome = execute_retrying(episode, step)
            if episode.finished:
                return
            if not outcome.executed:
                episode.give_up(f"{step} failed; an open-loop plan cannot recover")
                return
        episode.give_up("the plan ended before the goal was reached")


METHOD = ZeroShotPlanner
