"""Planners by name: `make_planner("auto")`, for the CLI, the nodes' parameters and
the benchmark. Each backend is imported only when asked for (Fast Downward's wheel is
large, and not on every machine).

`auto`, the default, is Fast Downward where its wheel is installed, with the search the
robot's tasks want (`fast_downward.EAGER_LAMA`: LAMA-first's heuristics in an eager
greedy search), and pyperplan where it is not (an arm64 robot computer). The choice
depends on what is installed and nothing else, never on a clock: the same task gets the
same plan on every run, in the benchmark's records and in a robot's replans. The eager
search's plans are as long as pyperplan's greedy best-first search with hFF on every
task the project ships and every replan of their scenarios (LAMA-first's, a lazy
search, walked to the plant and back before fetching water on a user's water-the-plant
task); Fast Downward reads every domain this project reads and answers public IPC
problems in about its own time where pyperplan takes seconds or minutes
(`benchmarks/bench_ipc.py`). `pyperplan` and `fast_downward` (LAMA-first, as Fast
Downward's users run it) stay selectable by name.
"""

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
        hint="in code: cowp_ros.methods.llm_guided.search.make_llm_guided_planner(model, "
        "beam=3); on the command line: cowp run TASK --method cowp_llm_guided (it passes "
        "the run's model)",
    )


def _auto(**bounds: Any) -> Planner:
    from cowp_ros.planning.fast_downward import EAGER_LAMA, FastDownwardPlanner, is_available

    if not is_available():
        return _pyperplan(**bounds)
    return FastDownwardPlanner(template=EAGER_LAMA, **bounds)


PLANNERS: dict[str, Callable[..., Planner]] = {
    "auto": _auto,
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


DEFAULT_PLANNER = "auto"


def make_planner(name: str = DEFAULT_PLANNER, **bounds: Any) -> Planner:
    """The planner called `name` (`auto`, `pyperplan`, `fast_downward` or alias `fd`);
    `bounds` (`memory_mb`, `max_ground_actions`) replace the defaults of
    `cowp_ros.limits`."""
    key = ALIASES.get(name.lower(), name.lower())
    factory = PLANNERS.get(key)
    if factory is None:
        raise PlannerError(
            f"unknown planner {name!r}", hint=f"choose one of: {', '.join(PLANNER_NAMES)}"
        )
    return factory(**bounds)
