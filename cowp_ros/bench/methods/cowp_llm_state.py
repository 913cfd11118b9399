"""COWP behind LLM-State: what the robot sees passes through an LLM-kept object belief.

A situation goes to `LLMStateTracker.observe_situation`; the model edits the belief with
whitelisted function calls, and COWP observes the belief's new sentences (about the
object the belief names) instead of the raw text, falling back to the raw text when the
model changed nothing. A failed step is reported to the tracker as well (a running
failure summary). Successful steps are not sent, to keep the model calls per trial
comparable with `cowp`: in this simulator only situations and failures carry news.
"""

from __future__ import annotations

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._driven import run_on_episode
from cowp_ros.bench.simulator import Episode
from cowp_ros.errors import CowpError
from cowp_ros.methods.llm_state.loop import BeliefLoop
from cowp_ros.methods.registry import build_loop


class CowpLLMState:
    name = "cowp_llm_state"
    label = "COWP+LLM-State"
    uses_llm = True
    summary = "COWP whose situations pass through an LLM-maintained object belief"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("COWP with LLM-State needs a language model")
        self.context = context
        self.loop: BeliefLoop | None = None

    def trace(self) -> list[str]:
        """COWP's narrative, with the belief's updates."""
        if self.loop is None:
            return []
        return [f"{e.kind}: {e.text}" for e in self.loop.report.events]

    def run(self, episode: Episode) -> None:
        assert self.context.model is not None
        loop = build_loop(
            "cowp",
            self.context.spec,
            self.context.model,
            self.context.planner,
            problem=episode.problem,
        )
        self.loop = BeliefLoop(loop, tell_successes=False)
        run_on_episode(self.loop, episode)


METHOD = CowpLLMState
