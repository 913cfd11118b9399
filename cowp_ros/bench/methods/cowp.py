"""COWP: the open-world planner itself (`cowp_ros.cowp.loop.OpenWorldPlanner`).

Each situation the robot sees goes to `observe` (Plan Monitor, predicates, replanning,
Knowledge Acquirer); each step's outcome goes to `step_done`. A step that fails with no
situation to explain it is reported as failed, and COWP replans from its state. The
trial runs on COWP's driver, as `cowp run` and the task manager do.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._driven import run_on_episode
from cowp_ros.bench.simulator import Episode
from cowp_ros.cowp.loop import OpenWorldPlanner
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
        assert self.context.model is not None
        self.loop = OpenWorldPlanner.for_task(
            self.context.spec, self.context.model, self.context.planner, problem=episode.problem
        )
        run_on_episode(self.loop, episode)


METHOD = Cowp
