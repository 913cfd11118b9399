"""Fast Downward, the compiled planner shipped inside the `up-fast-downward` wheel.

We call its driver script directly (the wheel's `downward/fast-downward.py`) rather than
through unified-planning: the driver reads our PDDL as is, negative preconditions
included, and we avoid a heavy dependency. Search: lazy greedy best-first with hFF and
preferred operators, the satisficing counterpart of the pyperplan default.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import tempfile
import time
from pathlib import Path

from cowp_ros.limits import MAX_GROUND_ACTIONS, PLANNER_MEMORY_MB
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.budget import check_grounding, out_of_memory_message
from cowp_ros.planning.planner import DEFAULT_TIMEOUT_S, PlannerError, archive_planner_input
from cowp_ros.planning.process import guarded, run_with_deadline, tail
from cowp_ros.planning.result import PlanResult, PlanStatus, PlanStep

DEFAULT_SEARCH = "lazy_greedy([ff()], preferred=[ff()])"
INSTALL_HINT = "pip install up-fast-downward==1.0.0 (listed in requirements/core.txt)"

# https://www.fast-downward.org/ExitCodes
SOLVED = 0
UNSOLVABLE = {10, 11, 12}  # translator proved it; search proved it; incomplete search gave up
OUT_OF_TIME = {23}
OUT_OF_MEMORY = {20, 22, 24}  # translator, search, search out of memory and time


def driver_path() -> Path | None:
    """The Fast Downward driver script inside the installed wheel, or None."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "downward" / "fast-downward.py"
        if candidate.is_file():
            return candidate
    return None


def is_available() -> bool:
    """True when the Fast Downward driver and its compiled search binary are installed."""
    driver = driver_path()
    return driver is not None and (driver.parent / "builds" / "release" / "bin").is_dir()


class FastDownwardPlanner:
    """`Planner` over Fast Downward; `search` is a Fast Downward search string."""

    name = "fast_downward"

    def __init__(
        self,
        search: str = DEFAULT_SEARCH,
        *,
        memory_mb: int = PLANNER_MEMORY_MB,
        max_ground_actions: int = MAX_GROUND_ACTIONS,
    ) -> None:
        driver = driver_path()
        if driver is None or not is_available():
            raise PlannerError("Fast Downward is not installed", hint=INSTALL_HINT)
        self.driver = driver
        self.search = search
        self.memory_mb = memory_mb
        self.max_ground_actions = max_ground_actions

    def solve(self, task: PlanningTask, timeout_s: float = DEFAULT_TIMEOUT_S) -> PlanResult:
        start = time.perf_counter()
        check_grounding(task, self.max_ground_actions)
        with tempfile.TemporaryDirectory(prefix="cowp_fd_") as tmp:
            workdir = Path(tmp)
            domain_path, problem_path = task.write(workdir, check=False)
            archive_planner_input(domain_path, problem_path)
            plan_path = workdir / "plan.txt"
            written = time.perf_counter()
            remaining = max(0.1, timeout_s - (written - start))
            outcome = run_with_deadline(
                guarded(
                    [
                        sys.executable,
                        str(self.driver),
                        "--plan-file",
                        str(plan_path),
                        "--search-time-limit",
                        f"{max(1, math.ceil(remaining))}s",
                        "--log-level",
                        "warning",
                        str(domain_path),
                        str(problem_path),
                        "--search",
                        self.search,
                    ]
                ),
                remaining,
                workdir,
                memory_mb=self.memory_mb,
            )
            plan_text = plan_path.read_text() if plan_path.is_file() else ""
        seconds = time.perf_counter() - start
        extra = {"write_s": written - start, "exit_code": outcome.returncode}
        if outcome.timed_out or outcome.returncode in OUT_OF_TIME:
            return PlanResult(
                PlanStatus.TIMEOUT, self.name, seconds, detail=f"no answer in {timeout_s:g} s"
            )
        if outcome.returncode in UNSOLVABLE:
            return PlanResult(
                PlanStatus.NO_PLAN,
                self.name,
                seconds,
                detail=f"Fast Downward exit code {outcome.returncode}: unsolvable",
                extra=extra,
            )
        if outcome.returncode in OUT_OF_MEMORY:
            raise PlannerError(out_of_memory_message(self.memory_mb))
        if outcome.returncode != SOLVED:
            raise PlannerError(
                f"Fast Downward failed on {task.source} (exit {outcome.returncode}):\n"
                f"{tail(outcome.stdout + outcome.stderr)}"
            )
        steps = tuple(
            PlanStep.parse(line)
            for line in plan_text.splitlines()
            if line.strip() and not line.startswith(";")
        )
        return PlanResult(PlanStatus.FOUND, self.name, seconds, steps, extra=extra)
