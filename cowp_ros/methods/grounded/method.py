"""The grounded method, the project's own: COWP's loop with grounded, per-situation
reasoning at its ports.

    loop = grounded_loop(get_task("fill_cup"), model)      # an OpenWorldPlanner
    drive(loop, robot)

What sits at the ports:

- Monitor: `situation_monitor.GroundedMonitor`, one decision per situation, grounded
  first (no question for a situation about nothing the plan uses);
- FactMaker: `grounding.GroundedFacts`, the fact from the grounded object, no model;
- Acquirer: `KnowledgeAcquirer`'s questions behind `frugal_acquirer.FrugalAcquirer`
  (the closest kinds first, role question first, stop at the first accepted);
- Planner: the given planner behind `planning.tidy.TidyPlanner` (no wandering steps);
- policies: GROUNDED_POLICIES (`policies.py`): a step that fails after a situation
  about one of its objects was judged harmless blames that situation (the failure is
  the evidence the judgement lacked): the step is blocked with its fact, no question.

Its thresholds are per model, chosen on the dev tasks, in `config/grounded.yaml`
(`GroundedSettings.for_model`); `docs/grounded.md` says how it decides.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import cast

from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.llm.embeddings import Embedder
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.grounded import questions
from cowp_ros.methods.grounded.frugal_acquirer import FrugalAcquirer
from cowp_ros.methods.grounded.grounding import GroundedFacts
from cowp_ros.methods.grounded.policies import GROUNDED_POLICIES
from cowp_ros.methods.grounded.settings import GroundedSettings, shared_embedder
from cowp_ros.methods.grounded.situation_monitor import (
    GroundedMonitor,
    RoleNeeds,
    RoleStates,
    Thresholds,
)
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.registry import (
    LoopParts,
    MethodEntry,
    ReasonerContext,
    Reasoners,
    build_loop,
    default_trace,
    open_world_planner,
    register,
)
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner
from cowp_ros.planning.tidy import TidyPlanner
from cowp_ros.tasks import TaskSpec

GROUNDED_NAME = "grounded"


def grounded_reasoners(
    model: LanguageModel, context: ReasonerContext, settings: GroundedSettings | None = None
) -> Reasoners:
    """The grounded monitor and facts, and the acquirer's questions, over `model`."""
    settings = settings or GroundedSettings.for_model(context.model_name)
    needs = cast(RoleNeeds, context.kept.setdefault(f"{GROUNDED_NAME}.role_needs", {}))
    stated = cast(RoleStates, context.kept.setdefault(f"{GROUNDED_NAME}.role_states", {}))
    return Reasoners(
        monitor=GroundedMonitor(
            model,
            context.description,
            Thresholds(
                use=settings.use_threshold,
                world=settings.world_threshold,
                dirty=settings.dirty_threshold,
                need=settings.need_threshold,
            ),
            examples=questions.examples_for(settings.restate),
            reserved=context.reserved,
            restate=settings.restate,
            needs=needs,
            stated=stated,
        ),
        facts=GroundedFacts(context.reserved),
        acquirer=KnowledgeAcquirer(
            model,
            context.phrases,
            threshold=context.threshold,
            role_threshold=settings.role_threshold,
        ),
    )


def grounded_loop_from(
    parts: LoopParts,
    settings: GroundedSettings | None = None,
    embedder: Embedder | None = None,
) -> OpenWorldPlanner:
    """The loop around the ports: frugal stand-ins, tidy plans, failures blamed."""
    settings = settings or GroundedSettings.for_model(parts.model_name)
    acquirer = FrugalAcquirer(
        parts.ports.acquirer,
        embedder=embedder if embedder is not None else shared_embedder(),
        max_candidates=settings.max_candidates,
        min_similarity=settings.min_similarity,
        planner=parts.planner,
    )
    return open_world_planner(
        parts,
        planner=TidyPlanner(parts.planner),
        acquirer=acquirer,
        policies=GROUNDED_POLICIES,
    )


def grounded_warm(model: LanguageModel, task_description: str = "") -> None:
    """Have the server read the questions' shared prefix, the one the model's settings
    ask for (with the restatement's examples where it restates)."""
    settings = GroundedSettings.for_model(model.name)
    questions.warm(model, task_description, questions.examples_for(settings.restate))


def grounded_trace(loop: OpenWorldPlanner) -> list[str]:
    """The loop's narrative, then one line per situation decision."""
    lines = default_trace(loop)
    if isinstance(loop.monitor, GroundedMonitor):
        lines += [d.describe() for d in loop.monitor.decisions]
    return lines


GROUNDED = register(
    MethodEntry(
        name=GROUNDED_NAME,
        label="Grounded (ours)",
        summary="grounded COWP: one decision per situation, a frugal acquirer, tidy plans",
        reasoners=grounded_reasoners,
        loop=grounded_loop_from,
        trace=grounded_trace,
        warm=grounded_warm,
    )
)


def grounded_loop(
    spec: TaskSpec,
    model: LanguageModel,
    planner: Planner | None = None,
    *,
    problem: PlanningTask | None = None,
    settings: GroundedSettings | None = None,
    embedder: Embedder | None = None,
    loop_settings: CowpSettings | None = None,
    cancel: CancelToken = NEVER,
) -> OpenWorldPlanner:
    """The grounded method's loop for a registered task, in one process (`settings`:
    other thresholds than the model's entry; `embedder`: another stand-in ranking)."""
    if settings is None and embedder is None:
        return build_loop(
            GROUNDED, spec, model, planner, problem=problem, settings=loop_settings, cancel=cancel
        )
    entry = dataclasses.replace(
        GROUNDED,
        reasoners=functools.partial(grounded_reasoners, settings=settings),
        loop=functools.partial(grounded_loop_from, settings=settings, embedder=embedder),
    )
    return build_loop(
        entry, spec, model, planner, problem=problem, settings=loop_settings, cancel=cancel
    )
