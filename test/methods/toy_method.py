"""A situation method of one's own, outside the package: this module and its
registration are all it takes to run it with `cowp run --method toy`, on the graph
(`method:=toy` on both nodes) and in `cowp bench --methods toy`, once
`COWP_METHODS=toy_method` names it (and the folder is on PYTHONPATH).

Its monitor needs no model: a situation blocks the first remaining step that uses an
object whose kind the sentence names ("the cup is dirty" blocks the first step on a
cup). The fact comes from grounding, and stand-ins from the paper's acquirer.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.answers import PlanCheck
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.grounded.grounding import GroundedFacts
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.registry import (
    MethodEntry,
    ReasonerContext,
    Reasoners,
    open_world_planner,
    register,
)
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep


class NamedKindMonitor:
    """Blocks the first step that uses an object of a kind the sentence names."""

    def check(
        self,
        steps: Sequence[PlanStep],
        situation: Situation,
        task: PlanningTask,
        focus: Sequence[str] = (),
    ) -> PlanCheck:
        words = set(situation.text.lower().replace(".", " ").replace(",", " ").split())
        for step in steps:
            for arg in step.args:
                kind = task.objects.get(arg, "")
                if kind in words:
                    return PlanCheck(blocked=step, reason=f"the sentence names the {kind} {arg}")
        return PlanCheck()


def toy_reasoners(model: LanguageModel, context: ReasonerContext) -> Reasoners:
    return Reasoners(
        monitor=NamedKindMonitor(),
        facts=GroundedFacts(context.reserved),
        acquirer=KnowledgeAcquirer(model, context.phrases),
    )


register(
    MethodEntry(
        name="toy",
        label="Toy",
        summary="blocks the first step on an object of a kind the sentence names",
        reasoners=toy_reasoners,
        loop=open_world_planner,
    )
)
