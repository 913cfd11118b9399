"""The paper's COWP: the open-world loop with Prompts 1-3 asked of a language model.

    loop = paper_loop(get_task("fill_cup"), model)      # an OpenWorldPlanner
    drive(loop, robot)

What sits at the loop's ports, all in this process:

- Monitor: `monitor.PlanMonitor`, Prompt 1 about each remaining step;
- FactMaker: `predicates.PredicateGenerator`, rules first, the model for the rest;
- Acquirer: `acquirer.KnowledgeAcquirer`, Prompt 2 about every present kind, Prompt 3
  to choose;
- policies: `policies.PAPER_POLICIES` (a failed step only replans).

The grounded method builds its own ports the same way (`grounded.grounded_loop`).
"""

from __future__ import annotations

from cowp_ros.cowp.acquirer import KnowledgeAcquirer
from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.cowp.monitor import PlanMonitor
from cowp_ros.cowp.policies import PAPER_POLICIES
from cowp_ros.cowp.predicates import PredicateGenerator
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, make_planner
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases

__all__ = ["paper_loop", "paper_loop_on"]


def paper_loop(
    spec: TaskSpec,
    model: LanguageModel,
    planner: Planner | None = None,
    *,
    problem: PlanningTask | None = None,
    settings: CowpSettings | None = None,
    cancel: CancelToken = NEVER,
) -> OpenWorldPlanner:
    """The paper's COWP for a registered task (`problem`: e.g. one from
    `spec.build_problem`; `planner`: pyperplan unless given)."""
    return paper_loop_on(
        problem or spec.load(),
        model,
        planner or make_planner("pyperplan"),
        phrases=ActionPhrases(spec.phrases),
        description=spec.description,
        task_name=spec.name,
        settings=settings,
        cancel=cancel,
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
    return OpenWorldPlanner(
        task,
        monitor=PlanMonitor(model, phrases),
        acquirer=KnowledgeAcquirer(model, phrases),
        predicates=PredicateGenerator(model, reserved=frozenset(task.predicates)),
        planner=planner,
        phrases=phrases,
        description=description,
        task_name=task_name,
        settings=settings,
        policies=PAPER_POLICIES,
        model=model,
        cancel=cancel,
    )
