"""The benchmark's methods: one module per method, discovered like the CLI's commands.

Protocol (all a new method needs; see `cw.py` for the shortest complete example):

    # cowp_ros/bench/methods/my_method.py
    from cowp_ros.bench.methods import MethodContext
    from cowp_ros.bench.view import Episode     # the robot's view (RobotView)

    class MyMethod:
        name = "my_method"            # the key users pass to --methods
        label = "My Method"           # the table's column label
        uses_llm = True               # False: runs without a model (CW, EK)
        summary = "one line for `cowp bench --list-methods`"

        def __init__(self, context: MethodContext) -> None: ...
        def run(self, episode: Episode) -> None:
            # drive the robot: episode.execute(step) -> StepObservation, until
            # episode.finished; call episode.give_up(reason) to stop early.
            ...

    METHOD = MyMethod

A method object lives for one trial. It sees only what a robot would, through the
view `run` receives (`cowp_ros.bench.view.RobotView`): the problem as the robot knows
it (`episode.problem`: domain, objects present, initial state, goal), the scene, the
situations seen so far, and what `execute` reports back (a situation seen before a
step, or a step that failed). Anything else (the judge file, the schedule, the judge's
records) raises `MethodLeakError`. The simulator decides success and the judge rates
the plan. Use `context.model` for every LLM question: it is metered per method and
shares the answer cache with the other methods.

A method may also define `trace(self) -> list[str]`: the lines a person reads to see
why a trial went as it did (COWP's questions, answers and PDDL changes). The runner
stores them in the trial's record under "trace", also when `run` raised.

Modules whose name starts with `_` hold shared helpers and are not methods.

A situation method of the registry (`cowp_ros.methods.registry`: COWP, the grounded
method, the related methods DKPROMPT, COWP+LLM-State and COWP+LLM search, one added
through `COWP_METHODS`) needs no module here: `_registered.py` runs it on the episode
the way `cowp run` runs a task. This package holds the benchmark's own baselines and
controls, which act on the episode directly.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.planning import Planner
from cowp_ros.tasks import TaskSpec

if TYPE_CHECKING:
    from cowp_ros.bench.privileged import PrivilegedAccess
    from cowp_ros.bench.view import Episode


GPT3_ANSWERS = "gpt3_answers"
"""Outside knowledge a method may declare (`outside_knowledge = GPT3_ANSWERS` on its
class): the original COWP system's GPT-3 answers for the trial's task, shipped with the
dataset; the runner puts the file's text in `context.options[GPT3_ANSWERS]`."""


@dataclass
class MethodContext:
    """What a method gets besides the episode: the model, a planner, the task, a seed.

    `model` is None for a run without LLM (then only methods with `uses_llm = False`
    run). `seed` is the method's own seed for the trial, for methods that draw anything
    at random: a one-way hash of the trial's draw seed and the method's name
    (`cowp_ros.bench.seal.method_seed`), the same in every run of the trial, and no way
    back to the draw seed, so no method can draw the trial's situations again.
    `options`: the outside knowledge the method declared, as text, never a path.
    `privileged` is None for every method but the oracle (`cowp_ros.bench.privileged`):
    no method reads the judge file.
    """

    spec: TaskSpec
    planner: Planner
    model: LanguageModel | None
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    privileged: PrivilegedAccess | None = None


@runtime_checkable
class BenchMethod(Protocol):
    """A method under test; see the module docstring."""

    name: str
    label: str
    uses_llm: bool
    summary: str

    def __init__(self, context: MethodContext) -> None: ...

    def run(self, episode: Episode) -> None: ...


BROKEN: dict[str, str] = {}
"""Method modules that failed to import -> the error (filled by `discover`)."""


def discover() -> dict[str, type[BenchMethod]]:
    """Every method module's `METHOD`, by its `name`, in module-name order.

    A module that fails to import is left out and its error kept in `BROKEN`: one
    broken method must not stop a run of the others; `select` names it if asked for.
    """
    found: dict[str, type[BenchMethod]] = {}
    BROKEN.clear()
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"{__name__}.{info.name}")
        except Exception as err:  # a plugin's bug is reported when it is asked for
            BROKEN[info.name] = f"{type(err).__name__}: {err}"
            continue
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
    from cowp_ros.bench.methods._registered import registered_methods

    for name, registered in registered_methods().items():
        if name in found:
            raise CowpError(
                f"a benchmark module and a registered situation method are both named {name!r}"
            )
        found[name] = registered
    return found


def select(names: Sequence[str]) -> list[type[BenchMethod]]:
    """The methods named (in the order given), or a CowpError listing the known ones."""
    known = discover()
    broken = [n for n in names if n not in known and n in BROKEN]
    if broken:
        raise CowpError(
            f"benchmark method module(s) {', '.join(broken)} cannot be imported: "
            + "; ".join(BROKEN[n] for n in broken),
            hint="fix the module, or leave the method out of --methods",
        )
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CowpError(
            f"unknown benchmark method(s): {', '.join(unknown)}",
            hint=f"known methods: {', '.join(known)}",
        )
    return [known[n] for n in names]
