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
from cowp_ros.bench.simulator import Episode
from cowp_ros.cowp.loop import OpenWorldPlanner, Phase
from cowp_ros.errors import CowpError
from cowp_ros.methods.llm_state.loop import attach_llm_state


class CowpLLMState:
    name = "cowp_llm_state"
    label = "COWP+LLM-State"
    uses_llm = True
    summary = "COWP whose situations pass through an LLM-maintained object belief"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("COWP with LLM-State needs a language model")
        self.context = context

    def run(self, episode: Episode) -> None:
        loop = OpenWorldPlanner.for_task(
            self.context.spec, self.context.model, self.context.planner, problem=episode.problem
        )
        tracker = attach_llm_state(loop)
        loop.plan()
        observed: set[str] = set()
        failures = 0
        while not episode.finished:
            step = loop.next_step()
            if step is None:
                reason = loop.explanation() if loop.phase is Phase.NO_SOLUTION else "stopped"
                episode.give_up(reason)
                return
            outcome = episode.execute(step)
            if episode.finished:
                return
            if outcome.situation is not None:
                tracker.observe_situation(outcome.situation)
                fresh = [s for s in tracker.situations() if s not in observed]
                for text in fresh or [outcome.situation]:
                    observed.add(text)
                    loop.observe(text)
            elif outcome.executed:
                failures = 0
                loop.step_done(True)
            else:
                failures += 1
                tracker.observe_outcome(step, False, f"{loop.describe(step)} {step}")
                if failures >= 3:
                    episode.give_up(f"{step} failed {failures} times")
                    return
                loop.step_done(False)


METHOD = CowpLLMState
