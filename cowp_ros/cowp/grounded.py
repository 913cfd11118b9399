"""The grounded method: COWP's loop with grounded, per-situation reasoning at its ports.

    loop = grounded_loop(get_task("fill_cup"), model)      # an OpenWorldPlanner
    drive(loop, robot)

The loop, the driver and the events are COWP's; what changes is what sits at the ports:

- Monitor: `situation_monitor.GroundedMonitor`, one decision per situation, grounded
  first (no question for a situation about nothing the plan uses);
- FactMaker: `grounding.GroundedFacts`, the fact from the grounded object, no model;
- Acquirer: `frugal_acquirer.FrugalAcquirer`, the closest kinds first, role question
  first, per-action questions only for a kind that passed it, stop at the first;
- Planner: the given planner behind `planning.tidy.TidyPlanner` (no wandering steps);
- policies: `policies.GROUNDED_POLICIES`: a step that fails after a situation about one
  of its objects was judged harmless blames that situation (the failure is the evidence
  the judgement lacked): the step is blocked with the situation's fact, no question.

Its thresholds are per model, chosen on the dev tasks, in `config/grounded.yaml`
(`GroundedSettings.for_model`); `docs/grounded.md` says how it decides.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.cowp.acquirer import KnowledgeAcquirer
from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.frugal_acquirer import FrugalAcquirer
from cowp_ros.cowp.grounding import GroundedFacts
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.cowp.policies import GROUNDED_POLICIES
from cowp_ros.cowp.situation_monitor import GroundedMonitor, Thresholds
from cowp_ros.errors import CowpError
from cowp_ros.llm.embeddings import Embedder
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, make_planner
from cowp_ros.planning.tidy import TidyPlanner
from cowp_ros.resources import share_path
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases

CONFIG_ENV = "COWP_GROUNDED_CONFIG"
DEFAULT_ENTRY = "default"


@dataclass(frozen=True)
class GroundedSettings:
    """The method's knobs for one model (see `config/grounded.yaml` for their meaning)."""

    use_threshold: float = 0.0
    world_threshold: float = 2.0
    role_threshold: float = 0.9
    max_candidates: int = 3
    min_similarity: float = 0.0
    model: str = DEFAULT_ENTRY

    @classmethod
    def for_model(cls, model: str, path: Path | None = None) -> GroundedSettings:
        """The entry for `model`, else the file's `default` entry."""
        path = path or default_config_path()
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except OSError as err:
            raise CowpError(f"cannot read {path}: {err.strerror}") from err
        except yaml.YAMLError as err:
            raise CowpError(f"{path} is not valid YAML: {err}") from err
        models = data.get("models") if isinstance(data, Mapping) else None
        if not isinstance(models, Mapping):
            raise CowpError(f"{path}: expected 'models:' mapping model names to settings")
        name = model if model in models else DEFAULT_ENTRY
        if name not in models:
            raise CowpError(
                f"{path} has no entry for {model!r} and no {DEFAULT_ENTRY!r} entry",
                hint="add one (thresholds are chosen on the dev tasks: docs/grounded.md)",
            )
        return cls.parse(name, models[name], str(path))

    @classmethod
    def parse(cls, name: str, raw: Any, source: str) -> GroundedSettings:
        """One entry, checked: an unknown key or a non-number is an error, not a default."""
        if not isinstance(raw, Mapping):
            raise CowpError(f"{source}, model {name!r}: the entry must be a mapping")
        known = {f.name for f in fields(cls)} - {"model"}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            if key == "tuned_on":
                continue
            if key not in known:
                raise CowpError(
                    f"{source}, model {name!r}: unknown setting {key!r}",
                    hint=f"known: {', '.join(sorted(known))}",
                )
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CowpError(f"{source}, model {name!r}: {key} must be a number")
            values[key] = int(value) if key == "max_candidates" else float(value)
        return cls(model=name, **values)


def default_config_path() -> Path:
    """`$COWP_GROUNDED_CONFIG`, else `config/grounded.yaml` of the share."""
    configured = os.environ.get(CONFIG_ENV)
    return Path(configured) if configured else share_path("config", "grounded.yaml")


def default_embedder() -> Embedder | None:
    """all-MiniLM-L6-v2 when its package is installed, else None (no prior order)."""
    from cowp_ros.llm.embeddings import SentenceEmbedder

    try:
        return SentenceEmbedder()
    except CowpError:
        return None


_EMBEDDER: Embedder | None = None


def shared_embedder() -> Embedder | None:
    """One embedder per process (its weights load once; it caches vectors per text)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = default_embedder()
    return _EMBEDDER


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
    """COWP's loop for a registered task with the grounded method at its ports and its
    policies (`loop_settings`: the loop's knobs)."""
    task = problem or spec.load()
    settings = settings or GroundedSettings.for_model(model.name)
    phrases = ActionPhrases(spec.phrases)
    reserved = frozenset(task.predicates)
    monitor = GroundedMonitor(
        model,
        spec.description,
        Thresholds(use=settings.use_threshold, world=settings.world_threshold),
        reserved=reserved,
    )
    acquirer = FrugalAcquirer(
        KnowledgeAcquirer(model, phrases, role_threshold=settings.role_threshold),
        embedder=embedder if embedder is not None else shared_embedder(),
        max_candidates=settings.max_candidates,
        min_similarity=settings.min_similarity,
    )
    return OpenWorldPlanner(
        task,
        model=model,
        planner=TidyPlanner(planner or make_planner("pyperplan")),
        phrases=phrases,
        description=spec.description,
        task_name=spec.name,
        settings=loop_settings,
        policies=GROUNDED_POLICIES,
        predicates=GroundedFacts(reserved),
        monitor=monitor,
        acquirer=acquirer,
        cancel=cancel,
    )
