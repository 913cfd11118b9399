"""COWP over LLM-guided search: the same open-world loop, the model steering the planner.

Every plan and replan of COWP comes from `cowp_ros.methods.llm_guided` (the model ranks
the applicable actions in a beam search; each plan is verified before it is used), with
the bench's own planner taking over when the guided search gives up. Beam width:
`context.options["beam"]` (default 3). Compare with `cowp` for what the guidance costs
in model calls and changes in outcomes.
"""

from __future__ import annotations

from dataclasses import replace

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._registered import method_class
from cowp_ros.bench.simulator import Episode
from cowp_ros.errors import CowpError
from cowp_ros.methods.llm_guided import DEFAULT_BEAM, make_llm_guided_planner


class CowpLLMGuided:
    name = "cowp_llm_guided"
    label = "COWP+LLM search"
    uses_llm = True
    summary = "COWP whose planner is LLM-guided beam search (verified plans, pyperplan fallback)"

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError("COWP with LLM-guided search needs a language model")
        planner = make_llm_guided_planner(
            context.model,
            beam=int(context.options.get("beam", DEFAULT_BEAM)),
            fallback=context.planner,
        )
        self.inner = method_class("cowp")(replace(context, planner=planner))

    def run(self, episode: Episode) -> None:
        self.inner.run(episode)


METHOD = CowpLLMGuided
