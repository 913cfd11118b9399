"""Planners by name: `make_planner("auto")`, for the CLI, the nodes' parameters and
the benchmark. Each backend is imported only when asked for (Fast Downward's wheel is
large, and not on every machine).

`auto`, the default, asks pyperplan first, for a few seconds, and Fast Downward when
pyperplan cannot read the task (a construct beyond STRIPS) or has no answer by then.
pyperplan's greedy best-first search with hFF finds the short, direct plans the robot's
own tasks want (Fast Downward's LAMA-first returns its first plan, which on a user's
water-the-plant task walks to the plant and back before fetching water); Fast Downward
reads every domain this project reads and answers real problems pyperplan does not in
60 s (`benchmarks/bench_ipc.py`). Where Fast Downward's wheel is missing (an arm64
robot computer), `auto` is pyperplan.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.limits import LimitError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.planner import DEFAULT_TIMEOUT_S, Planner, PlannerError
from cowp_ros.planning.result import PlanResult, PlanStatus


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


# How long `auto` gives pyperplan before Fast Downward takes over.
PYPERPLAN_FIRST_S = 5.0


class AutoPlanner:
    """pyperplan first, for `PYPERPLAN_FIRST_S`; Fast Downward for what it leaves."""

    name = "auto"

    def __init__(self, **bounds: Any) -> None:
        self.bounds = bounds

    def solve(self, task: PlanningTask, timeout_s: float = DEFAULT_TIMEOUT_S) -> PlanResult:
        from cowp_ros.planning.fast_downward import is_available

        if not is_available():
            return _pyperplan(**self.bounds).solve(task, timeout_s)
        started = time.perf_counter()
        try:
            first = _pyperplan(**self.bounds).solve(task, min(timeout_s, PYPERPLAN_FIRST_S))
        except LimitError:
            raise  # a bound refuses the task whichever planner would plan it
        except CowpError:
            first = None  # a construct pyperplan cannot read: Fast Downward reads it
        if first is not None and first.status is not PlanStatus.TIMEOUT:
            return first
        remaining = max(0.1, timeout_s - (time.perf_counter() - started))
        return _fast_downward(**self.bounds).solve(task, remaining)


def _auto(**bounds: Any) -> Planner:
    return AutoPlanner(**bounds)


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
