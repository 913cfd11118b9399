"""The grounded method: COWP's loop with one grounded decision per situation.

The project's own situation handling (`cowp_ros.cowp.grounded`): grounding first (no
question for a situation about nothing the plan uses), one calibrated question per
situation about the object's use in the task, a frugal acquirer, tidy plans. It runs on
COWP's loop and driver, as the paper's COWP does (`cowp.py`), so the two differ only in
what sits at the loop's ports.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._driven import run_on_episode
from cowp_ros.bench.view import Episode
from cowp_ros.cowp.grounded import grounded_loop
from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.cowp.situation_monitor import GroundedMonitor
from cowp_ros.errors import CowpError


class Grounded:
    name = "grounded"
    label = "Grounded (ours)"
    uses_llm = True
    summary = "grounded COWP: one decision per situation, a frugal acquirer, tidy plans"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("the grounded method needs a language model")
        self.context = context
        self.loop: OpenWorldPlanner | None = None

    def trace(self) -> list[str]:
        """The loop's narrative, then one line per situation decision."""
        if self.loop is None:
            return []
        lines = [f"{e.kind}: {e.text}" for e in self.loop.report.events]
        monitor = self.loop.monitor
        if isinstance(monitor, GroundedMonitor):
            lines += [d.describe() for d in monitor.decisions]
        return lines

    def run(self, episode: Episode) -> None:
        assert self.context.model is not None
        self.loop = grounded_loop(
            self.context.spec, self.context.model, self.context.planner, problem=episode.problem
        )
        run_on_episode(self.loop, episode)


METHOD = Grounded
