"""The benchmark's methods: one module per method, discovered like the CLI's commands.

Protocol (all a new method needs; see `cw.py` for the shortest complete example):

    # cowp_ros/bench/methods/my_method.py
    from cowp_ros.bench.methods import MethodContext
    from cowp_ros.bench.simulator import Episode

    class MyMethod:
        name = "my_method"            # the key users pass to --methods
        label = "My Method"           # the table's column label
        uses_llm = True               # False: runs without a model (CW, EK)
        summary = "one line for `cowp bench --list-methods`"

        def __init__(self, context: MethodContext) -> None: ...
        def run(self, episode: Episode) -> None:
            # drive the robot: episode.execute(step) -> StepOutcome, until
            # episode.finished; call episode.give_up(reason) to stop early.
            ...

    METHOD = MyMethod

A method object lives for one trial. It sees only what a robot would: the task, the
problem as the robot knows it (`episode.problem`: objects present, initial state), the
scene, and what `execute` reports back (a situation seen before a step, or a step that
failed). The simulator decides success. Use `context.model` for every LLM question: it
is metered per method and shares the answer cache with the other methods.

A method may also define `trace(self) -> list[str]`: the lines a person reads to see
why a trial went as it did (COWP's questions, answers and PDDL changes). The runner
stores them in the trial's record under "trace", also when `run` raised.

Modules whose name starts with `_` hold shared helpers and are not methods.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.planning import Planner
from cowp_ros.tasks import TaskSpec

if TYPE_CHECKING:
    from cowp_ros.bench.annotations import TaskAnnotation
    from cowp_ros.bench.simulator import Episode


@dataclass
class MethodContext:
    """What a method gets besides the episode: the model, a planner, the task, a seed.

    `model` is None for a run without LLM (then only methods with `uses_llm = False`
    run). `annotation` is the task's judge file: only EK may read it, as its external
    knowledge base (restricted to the object kinds it covers); every other method must
    not. `seed` is the trial's seed, for methods that draw anything at random.
    """

    spec: TaskSpec
    planner: Planner
    model: LanguageModel | None
    seed: int
    annotation: TaskAnnotation | None = None
    options: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class BenchMethod(Protocol):
    """A method under test; see the module docstring."""

    name: ClassVar[str]
    label: ClassVar[str]
    uses_llm: ClassVar[bool]
    summary: ClassVar[str]

    def __init__(self, context: MethodContext) -> None: ...

    def run(self, episode: Episode) -> None: ...


def discover() -> dict[str, type[BenchMethod]]:
    """Every method module's `METHOD`, by its `name`, in module-name order."""
    found: dict[str, type[BenchMethod]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        method = getattr(module, "METHOD", None)
        if method is None:
            continue
        for attribute in ("name", "label", "uses_llm", "summary", "run"):
            if not hasattr(method, attribute):
                raise CowpError(
                    f"benchmark method module {info.name} has METHOD without {attribute!r}",
                    hint="see the protocol in cowp_ros/bench/methods/__init__.py",
                )
        if method.name in found:
            raise CowpError(f"two benchmark methods are named {method.name!r}")
        found[method.name] = method
    return found


def select(names: Sequence[str]) -> list[type[BenchMethod]]:
    """The methods named (in the order given), or a CowpError listing the known ones."""
    known = discover()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CowpError(
            f"unknown benchmark method(s): {', '.join(unknown)}",
            hint=f"known methods: {', '.join(known)}",
        )
    return [known[n] for n in names]
