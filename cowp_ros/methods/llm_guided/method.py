"""LLM-guided search as a registered method: a method's loop planning by guided search.

`with_llm_guided(base)` is `base` with every plan and replan of its loop coming from
LLM-guided beam search (`search`: the model ranks the applicable actions, each plan is
verified before it is used), the run's planner taking over when the guided search
gives up. `cowp_llm_guided` is the one over the paper's method (`cowp run --method
cowp_llm_guided`, `cowp bench --methods cowp_llm_guided`); `cowp run --planner
llm_guided` puts it under whichever `--method` it runs. Compare with `cowp` for what
the guidance costs in model calls and changes in outcomes.

Option `BEAM`: the beam width (default 3). The search asks the loop's own model, so it
cannot run on the ROS graph.
"""

from __future__ import annotations

import dataclasses

from cowp_ros.cowp.ports import TaskLoop
from cowp_ros.methods.llm_guided.search import DEFAULT_BEAM, make_llm_guided_planner
from cowp_ros.methods.paper.method import PAPER
from cowp_ros.methods.registry import LoopParts, MethodEntry, register

BEAM = "llm_guided.beam"
"""Option: the beam width of the guided search (default 3)."""


def with_llm_guided(base: MethodEntry) -> MethodEntry:
    """`base` planning by LLM-guided search, named `<base>_llm_guided`."""

    def loop(parts: LoopParts) -> TaskLoop:
        beam = parts.options.get(BEAM, DEFAULT_BEAM)
        if not isinstance(beam, int):
            raise TypeError(f"{BEAM} must be a whole number, not {beam!r}")
        planner = make_llm_guided_planner(
            parts.needs_model("LLM-guided search"), beam=beam, fallback=parts.planner
        )
        return base.loop(dataclasses.replace(parts, planner=planner))

    return MethodEntry(
        name=f"{base.name}_llm_guided",
        label=f"{base.label}+LLM search",
        summary=f"{base.label} whose planner is LLM-guided beam search (verified plans; the "
        "run's planner takes over when it gives up)",
        loop=loop,
        reasoners=base.reasoners,
        trace=None,  # its benchmark trials keep no per-trial account
        warm=base.warm,
        off_graph="LLM-guided search asks the language model for every step it plans, "
        "inside the loop, and on the graph the loop runs in the task manager, which has no "
        "model (plans come from the planner node)",
    )


COWP_LLM_GUIDED = register(with_llm_guided(PAPER))
