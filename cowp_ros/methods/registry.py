"""The situation methods, by name: one registry read by every entry point.

A method decides what a situation means for the plan and what can replace what. It is
one `MethodEntry` with two halves, because a run has two places where it acts:

- `reasoners(model, context)`: what asks the model (the `Monitor`, the `FactMaker`, the
  `Acquirer`). In one process (`cowp run`, the benchmark) they sit at the loop's ports;
  on the ROS graph the commonsense node builds them for each request. A method that
  asks nothing at COWP's ports (DKPROMPT asks its own questions) has none.
- `loop(parts)`: the loop itself around given ports (the reasoners above, or the
  commonsense node's client): the method's loop policies, how it orders stand-ins, how
  it tidies plans; any `TaskLoop` the driver can drive.

`build_loop` composes the two for a run in one process. `cowp run --method`, `cowp demo
--method`, the `method` parameter of the commonsense node (the task manager adopts it)
and `cowp bench --methods` all read this registry, so a method added here runs
everywhere (on the graph only where `off_graph` does not say why not):

    # my_method.py, anywhere on PYTHONPATH; run with COWP_METHODS=my_method
    from cowp_ros.methods.registry import MethodEntry, register
    register(MethodEntry(name="mine", label="Mine", summary="...",
                         reasoners=my_reasoners, loop=my_loop))

`COWP_METHODS` names extra modules (comma-separated) imported on first use; each
registers its entries when imported. The built-in entries are `cowp` (the paper's
method, `methods/paper/`), `grounded` (the project's own, `methods/grounded/`) and the
related methods: `dkprompt` (`methods/dkprompt/`), `cowp_llm_state` (COWP behind an
LLM-kept belief, `methods/llm_state/`) and `cowp_llm_guided` (COWP over LLM-guided
search, `methods/llm_guided/`).

What a method needs beyond the task comes in `options`, a mapping each method reads
by its own keys (the paper's monitor threshold, DKPROMPT's images, the search's beam):
the registry passes it through and knows none of them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cowp_ros.cowp.cancel import NEVER, CancelToken
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.cowp.policies import PAPER_POLICIES, LoopPolicies
from cowp_ros.cowp.ports import Acquirer, FactMaker, Monitor, TaskLoop
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, make_planner
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases

METHODS_ENV = "COWP_METHODS"
"""Extra method modules to import, comma-separated (each calls `register`)."""

DEFAULT_METHOD = "grounded"

_BUILT_IN = (
    "cowp_ros.methods.paper.method",
    "cowp_ros.methods.grounded.method",
    "cowp_ros.methods.dkprompt.method",
    "cowp_ros.methods.llm_state.method",
    "cowp_ros.methods.llm_guided.method",
)

Options = Mapping[str, object]
"""A method's own settings for one run, by keys the method defines (see the module
docstring)."""


@dataclass(frozen=True)
class ReasonerContext:
    """What a method's reasoners know of the task besides the model.

    `options`: the method's own settings, read by its own keys (the commonsense node
    passes its monitor parameters there for the paper's monitor).

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
    options: Options = field(default_factory=dict)
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
    graph); None for a method without reasoners. `model_name`: the model that answers,
    for the method's per-model settings (on the graph: the commonsense node's).
    `model`: the in-process model, whose usage the report counts (None on the graph).
    `options`: the method's own settings (see `ReasonerContext`).
    """

    task: PlanningTask
    task_name: str
    description: str
    phrases: ActionPhrases
    ports: Reasoners | None
    planner: Planner
    model_name: str
    model: LanguageModel | None = None
    settings: CowpSettings = field(default_factory=CowpSettings)
    cancel: CancelToken = NEVER
    options: Options = field(default_factory=dict)

    def needs_model(self, method: str) -> LanguageModel:
        """The in-process model, or a clear error: `method` asks it inside the loop."""
        if self.model is None:
            raise CowpError(f"the {method} method needs a language model in the loop's process")
        return self.model


def default_trace(loop: TaskLoop) -> list[str]:
    """The loop's narrative, one line per event: what the benchmark keeps per trial."""
    return [f"{event.kind}: {event.text}" for event in loop.report.events]


@dataclass(frozen=True)
class MethodEntry:
    """One situation method (see the module docstring)."""

    name: str
    label: str
    summary: str
    loop: Callable[[LoopParts], TaskLoop]
    reasoners: Callable[[LanguageModel, ReasonerContext], Reasoners] | None = None
    """None: the method asks nothing at COWP's ports (its loop asks its own questions)."""
    trace: Callable[[TaskLoop], list[str]] | None = default_trace
    """The benchmark's per-trial account (None: the method keeps none)."""
    warm: Callable[[LanguageModel, str], None] | None = None
    """Have the model's server read the method's shared prompt prefix ahead of the
    first situation, with the task's description when known ("" when not; None: the
    method has none to warm)."""
    off_graph: str = ""
    """Why the method cannot run on the ROS graph ("": it can). On the graph the loop
    runs in the task manager with the commonsense node's answers at its ports and no
    model of its own; a method that needs more is refused there with this reason."""


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


def importable_method_names(*, on_graph: bool = False) -> tuple[str, ...]:
    """The methods whose modules import, for a command's help (`on_graph`: only those
    that run on the ROS graph): a `COWP_METHODS` module that does not import is left
    out here and said by `get_method`, as an error the command reports (a parser must
    not fail while it is being built)."""
    _load(tolerant=True)
    return tuple(name for name, entry in _ENTRIES.items() if not (on_graph and entry.off_graph))


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


def graph_method(name: str) -> MethodEntry:
    """The entry called `name`, for a run on the ROS graph: one that cannot run there
    (`off_graph`) is a CowpError saying why and where it does run."""
    entry = get_method(name)
    if entry.off_graph:
        raise CowpError(
            f"method {name!r} cannot run on the ROS graph: {entry.off_graph}",
            hint=f"run it in one process (cowp run --method {name}, cowp bench --methods "
            f"{name}), or choose one of: {', '.join(graph_method_names())}",
        )
    return entry


def graph_method_names() -> tuple[str, ...]:
    """The methods that run on the ROS graph."""
    _load()
    return tuple(name for name, entry in _ENTRIES.items() if not entry.off_graph)


def build_loop(
    entry: MethodEntry | str,
    task: TaskSpec | PlanningTask,
    model: LanguageModel | None,
    planner: Planner | None = None,
    *,
    problem: PlanningTask | None = None,
    phrases: ActionPhrases | None = None,
    description: str | None = None,
    task_name: str | None = None,
    settings: CowpSettings | None = None,
    options: Options | None = None,
    cancel: CancelToken = NEVER,
) -> TaskLoop:
    """The method's loop for one run in one process: its reasoners over `model` at the
    ports, composed by its `loop`.

    `task`: a registered task (its problem, phrases and description; `problem`: another
    problem of it, e.g. one from `spec.build_problem`), or a bare planning task with
    its `phrases` and `description`. `model` may be None only for a method whose loop
    asks no text model (DKPROMPT on camera images). `options`: the method's own
    settings (see the module docstring).
    """
    entry = get_method(entry) if isinstance(entry, str) else entry
    if isinstance(task, TaskSpec):
        problem = problem or task.load()
        phrases = phrases or ActionPhrases(task.phrases)
        description = task.description if description is None else description
        task_name = task.name if task_name is None else task_name
    else:
        problem = problem or task
    phrases = phrases or ActionPhrases({})
    description = description or ""
    options = dict(options or {})
    model_name = model.name if model is not None else ""
    ports = None
    if entry.reasoners is not None:
        if model is None:
            raise CowpError(f"the {entry.label} method needs a language model")
        context = ReasonerContext(problem, description, phrases, model_name, options=options)
        ports = entry.reasoners(model, context)
    return entry.loop(
        LoopParts(
            task=problem,
            task_name=task_name or "",
            description=description,
            phrases=phrases,
            ports=ports,
            planner=planner or make_planner(),
            model_name=model_name,
            model=model,
            settings=settings or CowpSettings(),
            cancel=cancel,
            options=options,
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
    if parts.ports is None:
        raise CowpError("COWP's loop needs a method's reasoners at its ports")
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
