"""The benchmark's adapter for every situation method of the registry.

A method registered in `cowp_ros.methods.registry` (COWP, the grounded method, the
related methods DKPROMPT, COWP+LLM-State and COWP+LLM search, one a user adds through
`COWP_METHODS`) needs no benchmark module: it runs a trial exactly as `cowp run` runs a
task, its loop built by the registry (`build_loop`, with the trial's
`context.options` as the method's options) and driven through the episode
(`_driven.run_on_episode`). `method_class(name)` gives the class for one entry;
it is an attribute of this module (`Registered_<name>`), so a worker process behind
the benchmark's boundary imports it by name like any other method class.
"""

from __future__ import annotations

from typing import Any

from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.methods._driven import run_on_episode
from cowp_ros.bench.view import Episode
from cowp_ros.cowp.ports import TaskLoop
from cowp_ros.errors import CowpError
from cowp_ros.methods.registry import MethodEntry, build_loop, get_method, method_names

PREFIX = "Registered_"


class RegisteredMethod:
    """One trial of a registered method (subclassed per entry by `method_class`)."""

    entry: MethodEntry
    name: str
    label: str
    summary: str
    uses_llm = True

    def __init__(self, context: MethodContext) -> None:
        if context.model is None:
            raise CowpError(f"the {self.label} method needs a language model")
        self.context = context
        self.loop: TaskLoop | None = None

    def trace(self) -> list[str]:
        """The method's own account of the trial (by default, the loop's narrative)."""
        if self.loop is None or self.entry.trace is None:
            return []
        return self.entry.trace(self.loop)

    def run(self, episode: Episode) -> None:
        assert self.context.model is not None
        self.loop = build_loop(
            self.entry,
            self.context.spec,
            self.context.model,
            self.context.planner,
            problem=episode.problem,
            options=self.context.options,
        )
        run_on_episode(self.loop, episode)


_CLASSES: dict[str, type[RegisteredMethod]] = {}


def method_class(name: str) -> type[RegisteredMethod]:
    """The benchmark class of the registered method `name` (one class per name)."""
    if name not in _CLASSES:
        entry = get_method(name)
        attributes = {
            "entry": entry,
            "name": entry.name,
            "label": entry.label,
            "summary": entry.summary,
            "__module__": __name__,
            "__qualname__": PREFIX + entry.name,
        }
        _CLASSES[name] = type(PREFIX + entry.name, (RegisteredMethod,), attributes)
    return _CLASSES[name]


def registered_methods() -> dict[str, type[RegisteredMethod]]:
    """Every registered method's benchmark class, by name."""
    return {name: method_class(name) for name in method_names()}


def __getattr__(attribute: str) -> Any:
    """`Registered_<name>`: how a worker process finds a registered method's class."""
    if attribute.startswith(PREFIX):
        return method_class(attribute[len(PREFIX) :])
    raise AttributeError(attribute)
