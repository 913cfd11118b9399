"""LLM-State as a registered method: a method's loop seen through an LLM-kept belief.

`with_llm_state(base)` is the entry whose loop is `base`'s (COWP's loop, with `base`'s
reasoners) behind a `BeliefLoop`: a situation goes to the belief first and the loop
observes what the belief says. `cowp_llm_state` is the one over the paper's method
(`cowp run --method cowp_llm_state`, `cowp bench --methods cowp_llm_state`); `cowp run
--llm-state` puts it in front of whichever `--method` it runs.

Option `TELL_SUCCESSES` (default False): whether steps done are told to the belief too,
so that attributes can follow actions. Off by default so a trial's model calls stay
comparable with the base method's: in the benchmark's world only situations and
failures carry news; `cowp run --llm-state` turns it on.

The belief is kept by the loop's own model, so it cannot run on the ROS graph.
"""

from __future__ import annotations

from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.errors import CowpError
from cowp_ros.methods.llm_state.loop import BeliefLoop
from cowp_ros.methods.paper.method import PAPER
from cowp_ros.methods.registry import LoopParts, MethodEntry, register

TELL_SUCCESSES = "llm_state.tell_successes"
"""Option: tell the belief about every step done, not only failures (default False)."""


def with_llm_state(base: MethodEntry) -> MethodEntry:
    """`base` with LLM-State in front of its monitor, named `<base>_llm_state`."""

    def loop(parts: LoopParts) -> BeliefLoop:
        parts.needs_model("LLM-State")
        inner = base.loop(parts)
        if not isinstance(inner, OpenWorldPlanner):
            raise CowpError(
                f"LLM-State goes in front of COWP's monitor; the {base.name} method's loop "
                "is not COWP's",
                hint="run LLM-State with a method on COWP's loop (cowp, grounded)",
            )
        return BeliefLoop(inner, tell_successes=bool(parts.options.get(TELL_SUCCESSES, False)))

    return MethodEntry(
        name=f"{base.name}_llm_state",
        label=f"{base.label}+LLM-State",
        summary=f"{base.label} whose situations pass through an LLM-maintained object belief",
        loop=loop,
        reasoners=base.reasoners,
        warm=base.warm,
        off_graph="LLM-State keeps its belief with the language model inside the loop, and "
        "on the graph the loop runs in the task manager, which has no model",
    )


COWP_LLM_STATE = register(with_llm_state(PAPER))
