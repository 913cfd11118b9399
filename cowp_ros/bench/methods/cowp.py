"""COWP: the open-world planner itself (`cowp_ros.cowp.loop.OpenWorldPlanner`).

Each situation the robot sees goes to `observe` (Plan Monitor, predicates, replanning,
Knowledge Acquirer); each step's outcome goes to `step_done`. A step that fails with no
situation to explain it is reported as failed, and COWP replans from its state.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.simulator import Episode
from cowp_ros.cowp.loop import OpenWorldPlanner, Phase
from cowp_ros.errors import CowpError


class Cowp:
    name = "cowp"
    label = "COWP"
    uses_llm = True
    summary = "COWP: Plan Monitor + Knowledge Acquirer over a classical planner"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("COWP needs a language model")
        self.context = context
        self.loop: OpenWorldPlanner | None = None

    def trace(self) -> list[str]:
        """The loop's narrative: every monitor verdict, predicate, plan and acquisition."""
        if self.loop is None:
            return []
        return [f"{e.kind}: {e.text}" for e in self.loop.report.events]

    def run(self, episode: Episode) -> None:
        loop = OpenWorldPlanner.for_task(
            self.context.spec, self.context.model, self.context.planner, problem=episode.problem
        )
        self.loop = loop
        loop.plan()
        failures = 0
        while not episode.finished:
            step = loop.next_step()
            if step is None:
                if loop.phase is Phase.NO_SOLUTION:
                    episode.give_up(loop.explanation())
                else:
                    episode.give_up(f"the loop stopped ({loop.phase.value})")
                return
            outcome = episode.execute(step)
            if episode.finished:
                return
            if outcome.situation is not None:
                loop.observe(outcome.situation)
            elif outcome.executed:
                failures = 0
                loop.step_done(True)
            else:
                failures += 1
                if failures >= 3:
                    episode.give_up(f"{step} failed {failures} times")
                    return
                loop.step_done(False)


METHOD = Cowp
