"""Closed World (CW): a classical planner that replans on failure but never learns.

The paper's first baseline: no language model and no knowledge beyond the PDDL task. A
situation is a sentence it cannot interpret; when a step fails it replans from what it
knows, which is unchanged, so the same step fails again: it handles no situation that
needs a change of plan, by construction.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._common import closed_world_run
from cowp_ros.bench.simulator import Episode


class ClosedWorld:
    name = "cw"
    label = "CW"
    uses_llm = False
    summary = "classical planning in a closed world; replans on failure, never learns"

    def __init__(self, context: MethodContext) -> None:
        self.context = context

    def run(self, episode: Episode) -> None:
        closed_world_run(episode, self.context.planner, episode.problem)


METHOD = ClosedWorld
