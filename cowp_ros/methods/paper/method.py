"""COWP, the paper's method: Prompts 1-3 at the loop's ports.

- Monitor: `PlanMonitor`, one question per remaining step ("is it still suitable to
  fill the cup, given that the cup is dirty?"), calibrated when the model has an entry
  in `config/monitor_calibration.yaml`;
- FactMaker: `PredicateGenerator`, the situation as a fact (rules first, then the model);
- Acquirer: `KnowledgeAcquirer`, every present kind asked about in the failed role.

- policies: `cowp.policies.PAPER_POLICIES` (a failed step only replans).

    loop = paper_loop(get_task("fill_cup"), model)      # an OpenWorldPlanner
    drive(loop, robot)
"""

from __future__ import annotations

from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.cowp.policies import PAPER_POLICIES
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.paper.monitor import PlanMonitor
from cowp_ros.methods.paper.predicates import PredicateGenerator
from cowp_ros.methods.registry import (
    LoopParts,
    MethodEntry,
    ReasonerContext,
    Reasoners,
    build_loop,
    build_loop_on,
    open_world_planner,
    register,
)
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases


def paper_reasoners(model: LanguageModel, context: ReasonerContext) -> Reasoners:
    """Prompt 1 (monitor), the fact maker and Prompts 2-3 (acquirer) over `model`."""
    return Reasoners(
        monitor=PlanMonitor(
            model, context.phrases, threshold=context.threshold, calibration=context.calibration
        ),
        facts=PredicateGenerator(model, reserved=context.reserved),
        acquirer=KnowledgeAcquirer(model, context.phrases, threshold=context.threshold),
    )


def paper_loop_from(parts: LoopParts) -> OpenWorldPlanner:
    """COWP's loop with the ports as they are."""
    return open_world_planner(parts, policies=PAPER_POLICIES)


PAPER = register(
    MethodEntry(
        name="cowp",
        label="COWP",
        summary="COWP: Plan Monitor + Knowledge Acquirer over a classical planner",
        reasoners=paper_reasoners,
        loop=paper_loop_from,
    )
)


def paper_loop(
    spec: TaskSpec,
    model: LanguageModel,
    planner: Planner | None = None,
    *,
    problem: PlanningTask | None = None,
    settings: CowpSettings | None = None,
    cancel: CancelToken = NEVER,
) -> OpenWorldPlanner:
    """The paper's COWP for a registered task, in one process."""
    return build_loop(
        PAPER, spec, model, planner, problem=problem, settings=settings, cancel=cancel
    )


def paper_loop_on(
    task: PlanningTask,
    model: LanguageModel,
    planner: Planner,
    *,
    phrases: ActionPhrases,
    description: str,
    task_name: str = "",
    settings: CowpSettings | None = None,
    cancel: CancelToken = NEVER,
) -> OpenWorldPlanner:
    """The paper's COWP for a bare planning task, with its phrases and description."""
    return build_loop_on(
        PAPER,
        task,
        model,
        planner,
        phrases=phrases,
        description=description,
        task_name=task_name,
        settings=settings,
        cancel=cancel,
    )
