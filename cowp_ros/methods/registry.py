"""The situation methods, by name: one registry read by every entry point.

A method decides what a situation means for the plan and what can replace what. It is
one `MethodEntry` with two halves, because a run has two places where it acts:

- `reasoners(model, context)`: what asks the model (the `Monitor`, the `FactMaker`, the
  `Acquirer`). In one process (`cowp run`, the benchmark) they sit at the loop's ports;
  on the ROS graph the commonsense node builds them for each request.
- `loop(parts)`: the loop itself around given ports (the reasoners above, or the
  commonsense node's client): the method's loop policies, how it orders stand-ins, how
  it tidies plans.

`cowp run --method`, `cowp demo --method`, the `method` parameter of the commonsense
node and of the task manager, and `cowp bench --methods` all read this registry, so a
method added here runs everywhere:

    # my_method.py, anywhere on PYTHONPATH; run with COWP_METHODS=my_method
    from cowp_ros.methods.registry import MethodEntry, register
    register(MethodEntry(name="mine", label="Mine", summary="...",
                         reasoners=my_reasoners, loop=my_loop))

`COWP_METHODS` names extra modules (comma-separated) imported on first use; each
registers its entries when imported. The built-in entries are `cowp` (the paper's
method, `methods/paper/`) and `grounded` (the project's own, `methods/grounded/`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.cowp.policies import PAPER_POLICIES, LoopPolicies
from cowp_ros.cowp.ports import Acquirer, FactMaker, Monitor, TaskLoop
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.paper.calibration.config import MonitorCalibration
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, make_planner
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases

METHODS_ENV = "COWP_METHODS"
"""Extra method modules to import, comma-separated (each calls `register`)."""

DEFAULT_METHOD = "grounded"

_BUILT_IN = ("cowp_ros.methods.paper.method", "cowp_ros.methods.grounded.method")


@dataclass(frozen=True)
class ReasonerContext:
    """What a method's reasoners know of the task besides the model.

    `threshold` and `calibration` belong to the paper's monitor (the P(yes) fallback
    for an unclear answer, and the calibrated decision: "auto" reads the model's entry
    in `config/monitor_calibration.yaml`); other methods may ignore them.

    `kept` is where reasoners keep answers that hold beyond one set of reasoners (they
    depend only on the model and the task's words, e.g. what a role needs): the
    commonsense node, which builds reasoners per request, passes one mapping for its
    whole life; in one process, one loop's reasoners get a fresh one. A method keys its
    entries by its own name.
    """

    task: PlanningTask
    description: str
    phrases: ActionPhrases
    model_name: str
    threshold: float = 0.5
    calibration: MonitorCalibration | Literal["auto"] | None = "auto"
    kept: dict[str, object] = field(default_factory=dict)

    @property
    def reserved(self) -> frozenset[str]:
        """The domain's own predicates: a fact made for a situation never reuses one."""
        return frozenset(self.task.predicates)


@dataclass(frozen=True)
class Reasoners:
    """The model-facing ports of one method, for one task."""

    monitor: Monitor
    facts: FactMaker
    acquirer: Acquirer


@dataclass(frozen=True)
class LoopParts:
    """What the loop of one run is built from, whatever the method.

    `ports`: the reasoners (in process) or the commonsense node's client (on the
    graph). `model_name`: the model that answers, for the method's per-model settings
    (on the graph: the commonsense node's). `model`: the in-process model, whose usage
    the report counts (None on the graph).
    """

    task: PlanningTask
    task_name: str
    description: str
    phrases: ActionPhrases
    ports: Reasoners
    planner: Planner
    model_name: str
    model: LanguageModel | None = None
    settings: CowpSettings = field(default_factory=CowpSettings)
    cancel: CancelToken = NEVER


def default_trace(loop: TaskLoop) -> list[str]:
    """The loop's narrative, one line per event: what the benchmark keeps per trial."""
    return [f"{event.kind}: {event.text}" for event in loop.report.events]


@dataclass(frozen=True)
class MethodEntry:
    """One situation method (see the module docstring)."""

    name: str
    label: str
    summary: str
    reasoners: Callable[[LanguageModel, ReasonerContext], Reasoners]
    loop: Callable[[LoopParts], OpenWorldPlanner]
    trace: Callable[[OpenWorldPlanner], list[str]] = default_trace
    warm: Callable[[LanguageModel, str], None] | None = None
    """Have the model's server read the method's shared prompt prefix ahead of the
    first situation, with the task's description when known ("" when not; None: the
    method has none to warm)."""


_ENTRIES: dict[str, MethodEntry] = {}
_LOADED: set[str] = set()


def register(entry: MethodEntry) -> MethodEntry:
    """Add `entry`; registering the same name twice is an error unless it is the same
    entry (a module imported twice)."""
    if not entry.name.isidentifier():
        raise CowpError(
            f"method name {entry.name!r} is not an identifier",
            hint="use letters, digits and underscores (it is a CLI choice and a parameter)",
        )
    known = _ENTRIES.get(entry.name)
    if known is not None and known != entry:
        raise CowpError(f"two methods are named {entry.name!r}")
    _ENTRIES[entry.name] = entry
    return entry


def _load(*, tolerant: bool = False) -> None:
    """Import the built-in entries and the modules `COWP_METHODS` names, once each
    (`tolerant`: skip a module that does not import; it is tried again next time)."""
    extra = [m.strip() for m in os.environ.get(METHODS_ENV, "").split(",") if m.strip()]
    for module in (*_BUILT_IN, *extra):
        if module in _LOADED:
            continue
        try:
            importlib.import_module(module)
        except ImportError as err:
            if tolerant:
                continue
            raise CowpError(
                f"cannot import method module {module!r} ({METHODS_ENV}): {err}",
                hint="put the module on PYTHONPATH, or leave it out of " + METHODS_ENV,
            ) from err
        _LOADED.add(module)


def method_names() -> tuple[str, ...]:
    """Every registered method's name, the built-in ones first."""
    _load()
    return tuple(_ENTRIES)


def importable_method_names() -> tuple[str, ...]:
    """The methods whose modules import, for a command's help: a `COWP_METHODS` module
    that does not import is left out here and said by `get_method`, as an error the
    command reports (a parser must not fail while it is being built)."""
    _load(tolerant=True)
    return tuple(_ENTRIES)


def get_method(name: str) -> MethodEntry:
    """The entry called `name`, or a CowpError naming the known ones."""
    _load()
    entry = _ENTRIES.get(name)
    if entry is None:
        raise CowpError(
            f"unknown method {name!r}",
            hint=f"known methods: {', '.join(_ENTRIES)} (more with {METHODS_ENV}=module,...)",
        )
    return entry


def build_loop(
    entry: MethodEntry | str,
    spec: TaskSpec,
    model: LanguageModel,
    planner: Planner | None = None,
    *,
    problem: PlanningTask | None = None,
    settings: CowpSettings | None = None,
    cancel: CancelToken = NEVER,
) -> OpenWorldPlanner:
    """The method's loop for a registered task in one process: its reasoners over
    `model` at the ports (`problem`: e.g. one from `spec.build_problem`)."""
    return build_loop_on(
        entry,
        problem or spec.load(),
        model,
        planner,
        phrases=ActionPhrases(spec.phrases),
        description=spec.description,
        task_name=spec.name,
        settings=settings,
        cancel=cancel,
    )


def build_loop_on(
    entry: MethodEntry | str,
    task: PlanningTask,
    model: LanguageModel,
    planner: Planner | None = None,
    *,
    phrases: ActionPhrases,
    description: str,
    task_name: str = "",
    settings: CowpSettings | None = None,
    cancel: CancelToken = NEVER,
) -> OpenWorldPlanner:
    """The method's loop for a bare planning task, with its phrases and description."""
    entry = get_method(entry) if isinstance(entry, str) else entry
    context = ReasonerContext(task, description, phrases, model.name)
    return entry.loop(
        LoopParts(
            task=task,
            task_name=task_name,
            description=description,
            phrases=phrases,
            ports=entry.reasoners(model, context),
            planner=planner or make_planner(),
            model_name=model.name,
            model=model,
            settings=settings or CowpSettings(),
            cancel=cancel,
        )
    )


def open_world_planner(
    parts: LoopParts,
    *,
    planner: Planner | None = None,
    acquirer: Acquirer | None = None,
    settings: CowpSettings | None = None,
    policies: LoopPolicies = PAPER_POLICIES,
) -> OpenWorldPlanner:
    """COWP's loop over `parts`, with what the method puts in their place (another
    planner, an acquirer wrapped around the ports', other loop settings, its policies:
    `cowp.policies`): what a method's `loop` ends with."""
    return OpenWorldPlanner(
        parts.task,
        model=parts.model,
        planner=planner or parts.planner,
        phrases=parts.phrases,
        description=parts.description,
        task_name=parts.task_name,
        settings=settings or parts.settings,
        predicates=parts.ports.facts,
        monitor=parts.ports.monitor,
        acquirer=acquirer or parts.ports.acquirer,
        policies=policies,
        cancel=parts.cancel,
    )
