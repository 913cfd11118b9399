"""COWP, the paper's method: Prompts 1-3 at the loop's ports.

- Monitor: `PlanMonitor`, one question per remaining step ("is it still suitable to
  fill the cup, given that the cup is dirty?"), calibrated when the model has an entry
  in `config/monitor_calibration.yaml`;
- FactMaker: `PredicateGenerator`, the situation as a fact (rules first, then the model);
- Acquirer: `KnowledgeAcquirer`, every present kind asked about in the failed role.

The loop keeps the plan the planner gives and only replans after a failed step.
"""

from __future__ import annotations

from cowp_ros.cowp.acquirer import KnowledgeAcquirer
from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.cowp.monitor import PlanMonitor
from cowp_ros.cowp.predicates import PredicateGenerator
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.registry import (
    LoopParts,
    MethodEntry,
    ReasonerContext,
    Reasoners,
    open_world_planner,
    register,
)


def paper_reasoners(model: LanguageModel, context: ReasonerContext) -> Reasoners:
    """Prompt 1 (monitor), the fact maker and Prompts 2-3 (acquirer) over `model`."""
    return Reasoners(
        monitor=PlanMonitor(
            model, context.phrases, threshold=context.threshold, calibration=context.calibration
        ),
        facts=PredicateGenerator(model, reserved=context.reserved),
        acquirer=KnowledgeAcquirer(model, context.phrases, threshold=context.threshold),
    )


def paper_loop(parts: LoopParts) -> OpenWorldPlanner:
    """COWP's loop with the ports as they are."""
    return open_world_planner(parts)


PAPER = register(
    MethodEntry(
        name="cowp",
        label="COWP",
        summary="COWP: Plan Monitor + Knowledge Acquirer over a classical planner",
        reasoners=paper_reasoners,
        loop=paper_loop,
    )
)
