"""The grounded method, the project's own: COWP's loop with grounded, per-situation
reasoning at its ports.

    loop = build_loop("grounded", get_task("fill_cup"), model)      # an OpenWorldPlanner
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
(`GroundedSettings.for_model`); `docs/grounded.md` says how it decides. Its own options
(`registry.build_loop(options=...)`): `SETTINGS`, other thresholds than the model's
entry (a `GroundedSettings`), and `EMBEDDER`, another stand-in ranking (an `Embedder`);
the acquirer's P(yes) fallback is the paper's option (`paper.method.THRESHOLD`).
"""

from __future__ import annotations

from typing import cast

from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.cowp.ports import TaskLoop
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
from cowp_ros.methods.paper.method import threshold_of
from cowp_ros.methods.registry import (
    LoopParts,
    MethodEntry,
    Options,
    ReasonerContext,
    Reasoners,
    default_trace,
    open_world_planner,
    register,
)
from cowp_ros.planning.tidy import TidyPlanner

GROUNDED_NAME = "grounded"
SETTINGS = "grounded.settings"
"""Option: a `GroundedSettings` in place of the model's entry in config/grounded.yaml."""
EMBEDDER = "grounded.embedder"
"""Option: the `Embedder` that ranks stand-in kinds (default: the shared sentence model)."""


def _settings(options: Options, model_name: str) -> GroundedSettings:
    given = options.get(SETTINGS)
    if given is None:
        return GroundedSettings.for_model(model_name)
    if not isinstance(given, GroundedSettings):
        raise TypeError(f"{SETTINGS} must be a GroundedSettings, not {given!r}")
    return given


def grounded_reasoners(model: LanguageModel, context: ReasonerContext) -> Reasoners:
    """The grounded monitor and facts, and the acquirer's questions, over `model`."""
    settings = _settings(context.options, context.model_name)
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
            read_both=settings.read_both,
            needs=needs,
            stated=stated,
        ),
        facts=GroundedFacts(context.reserved),
        acquirer=KnowledgeAcquirer(
            model,
            context.phrases,
            threshold=threshold_of(context.options),
            role_threshold=settings.role_threshold,
        ),
    )


def grounded_loop_from(parts: LoopParts) -> OpenWorldPlanner:
    """The loop around the ports: frugal stand-ins, tidy plans, failures blamed."""
    if parts.ports is None:
        raise ValueError("the grounded loop needs the method's reasoners at its ports")
    settings = _settings(parts.options, parts.model_name)
    embedder = cast(Embedder | None, parts.options.get(EMBEDDER))
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


def grounded_trace(loop: TaskLoop) -> list[str]:
    """The loop's narrative, then one line per situation decision."""
    lines = default_trace(loop)
    if isinstance(loop, OpenWorldPlanner) and isinstance(loop.monitor, GroundedMonitor):
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
