"""Language Models as Zero-Shot Planners (LMZSP; Huang et al., ICML 2022).

The model writes the plan one step at a time in free text after demonstrations
("Task: ... Step 1: ..."): the three most similar of five household tasks outside the
benchmark, chosen by sentence embedding as the paper chooses its example. Each step is
translated to the admissible action nearest in meaning by sentence-embedding similarity
(all-MiniLM-L6-v2, a Sentence-BERT model like the paper's Sentence-RoBERTa; see
`_common`), and the translation, not the raw text, is appended to the prompt before the
next step, as in the paper. Generation stops when the model says "done" (or nothing), or
after `MAX_STEPS`; a repeated step is kept (the model sees it and may move on), since
the paper has no such rule.

The plan is then executed open loop: the robot does not react to what it sees. A step
that fails ends the run (the plan has no way to recover).
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import (
    Translation,
    Translator,
    admissible_actions,
    execute_retrying,
)
from cowp_ros.bench.view import Episode
from cowp_ros.errors import CowpError
from cowp_ros.llm.embeddings import Embedder, default_embedder, similarities
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import ActionPhrases

MAX_STEPS = 16
SYSTEM = (
    "You are a household robot that plans tasks step by step. Continue the plan: write "
    "only the next step, one simple action (a verb and its objects) in a few words, or "
    "'done' when every step of the task is finished."
)
DEMONSTRATIONS = (
    (
        "watering the plant on the desk",
        "find the watering can; grasp the watering can; find the faucet; turn on the "
        "faucet; fill the watering can with water from the faucet; walk to the desk; "
        "water the plant with the watering can",
    ),
    (
        "making toast on a plate",
        "find the bread; find the toaster; put the bread in the toaster; turn on the "
        "toaster; find the plate; put the toast on the plate",
    ),
    (
        "making coffee in a mug with the coffee machine",
        "find the coffee machine; plug the coffee machine into the outlet; turn on the "
        "coffee machine; find the mug; grasp the mug; fill the mug with coffee from the "
        "coffee machine; place the mug on the desk",
    ),
    (
        "putting a book from the cabinet on the shelf",
        "find the cabinet; walk to the cabinet; open the cabinet; find the book in the "
        "cabinet; take the book out of the cabinet; find the shelf; walk to the shelf; "
        "place the book on the shelf",
    ),
    (
        "serving soup in a bowl at the table",
        "find the pot; find the bowl; grasp the bowl; fill the bowl with soup from the "
        "pot; walk to the table; place the bowl on the table",
    ),
)
"""Household tasks outside the benchmark, one simple action a step; the most similar to
the task (by sentence embedding) are the demonstrations, as the paper selects its
example. Chosen on the dev tasks: with one fixed five-step example the model wrote
compound steps ("turn the faucet on to fill the cup") and said "done" after two; with
the single most similar one it still said "done" before holding or placing the cup."""


EXAMPLES = 3
"""How many demonstrations the prompt shows, most similar last (next to the task)."""


def demonstration(task: str, embedder: Embedder | None = None, count: int = EXAMPLES) -> str:
    """The `count` most similar demonstrations, written as the prompt shows a plan."""
    embedder = embedder or default_embedder()
    scores = similarities(embedder, task, [d for d, _ in DEMONSTRATIONS])
    chosen = sorted(range(len(DEMONSTRATIONS)), key=lambda i: float(scores[i]))[-count:]
    blocks = []
    for index in chosen:
        description, steps = DEMONSTRATIONS[index]
        parts = [s.strip() for s in steps.split(";")]
        lines = [f"Task: {description}"]
        lines += [f"Step {i}: {s}" for i, s in enumerate([*parts, "done"], start=1)]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


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
        self.translations: list[Translation] = []
        self.stopped = f"after {MAX_STEPS} steps"

    def write_plan(self, episode: Episode) -> list[PlanStep]:
        spec = self.context.spec
        translator = Translator(admissible_actions(episode.problem, ActionPhrases(spec.phrases)))
        example = demonstration(spec.description, translator.embedder)
        lines = [f"Task: {spec.description}"]
        plan: list[PlanStep] = []
        for number in range(1, MAX_STEPS + 1):
            prompt = f"{example}\n" + "\n".join(lines) + f"\nStep {number}:"
            text = first_line(self.model.complete(prompt, system=SYSTEM, max_tokens=16))
            if not text or text.lower().startswith("done"):
                self.stopped = f"step {number}: the model wrote {text or 'nothing'!r}"
                break
            translation = translator.translate(text)
            self.translations.append(translation)
            plan.append(translation.action.step)
            lines.append(f"Step {number}: {translation.action.text}")
        return plan

    def trace(self) -> list[str]:
        """Each step as the model wrote it and the action it was translated to."""
        return [
            f"wrote {t.text!r} -> {t.action.step} ({t.action.text}; cosine {t.similarity:.2f})"
            for t in self.translations
        ] + [f"plan ended: {self.stopped}"]

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
