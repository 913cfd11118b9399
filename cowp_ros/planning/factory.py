"""Planners by name: `make_planner("pyperplan")`, for the CLI, the nodes' parameters and
the benchmark. Each backend is imported only when asked for (Fast Downward's wheel is
large, and not on every machine)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cowp_ros.planning.planner import Planner, PlannerError


def _pyperplan(**bounds: Any) -> Planner:
    from cowp_ros.planning.pyperplan_planner import PyperplanPlanner

    return PyperplanPlanner(**bounds)


def _fast_downward(**bounds: Any) -> Planner:
    from cowp_ros.planning.fast_downward import FastDownwardPlanner

    return FastDownwardPlanner(**bounds)


def _llm_guided(**bounds: Any) -> Planner:
    """LLM-guided search cannot be built from a name alone: it needs the model to ask."""
    raise PlannerError(
        "the llm_guided planner needs a language model, and make_planner() has none",
        hint="in code: cowp_ros.methods.llm_guided.make_llm_guided_planner(model, beam=3); "
        "on the command line: cowp run TASK --planner llm_guided (it passes the run's model)",
    )


PLANNERS: dict[str, Callable[..., Planner]] = {
    "pyperplan": _pyperplan,
    "fast_downward": _fast_downward,
    "llm_guided": _llm_guided,
}
PLANNER_NAMES = tuple(PLANNERS)
ALIASES = {
    "fd": "fast_downward",
    "fast-downward": "fast_downward",
    "downward": "fast_downward",
    "llm-guided": "llm_guided",
}


def make_planner(name: str = "pyperplan", **bounds: Any) -> Planner:
    """The planner called `name` (`pyperplan`, `fast_downward` or alias `fd`); `bounds`
    (`memory_mb`, `max_ground_actions`) replace the defaults of `cowp_ros.limits`."""
    key = ALIASES.get(name.lower(), name.lower())
    factory = PLANNERS.get(key)
    if factory is None:
        raise PlannerError(
            f"unknown planner {name!r}", hint=f"choose one of: {', '.join(PLANNER_NAMES)}"
        )
    return factory(**bounds)
