"""pyperplan, greedy best-first search with hFF, in a child process with a deadline.

Greedy best-first + hFF is the default because on this project's domains it stays near a
second with 43 objects where A* + hmax takes half a minute (FACTS.md); COWP replans
often, and plan length matters less than answering at all. The search runs in a child
process so that a deadline stops it for certain (a Python thread cannot be stopped).
Negative preconditions added by the monitor are compiled away first (pyperplan is STRIPS).
A task that would ground too many actions is refused before the worker starts, and the
worker runs under a memory cap (`budget.py`).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from cowp_ros.limits import MAX_GROUND_ACTIONS, PLANNER_MEMORY_MB
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.negation import strips_copy
from cowp_ros.planning.budget import OUT_OF_MEMORY_EXIT, check_grounding, out_of_memory_message
from cowp_ros.planning.planner import DEFAULT_TIMEOUT_S, PlannerError, archive_planner_input
from cowp_ros.planning.process import run_with_deadline, tail
from cowp_ros.planning.result import PlanResult, PlanStatus, PlanStep

WORKER = Path(__file__).with_name("pyperplan_worker.py")


class PyperplanPlanner:
    """`Planner` over pyperplan; `search` and `heuristic` are pyperplan's own names
    (`heuristic="none"` for the blind searches)."""

    name = "pyperplan"

    def __init__(
        self,
        search: str = "gbf",
        heuristic: str = "hff",
        *,
        memory_mb: int = PLANNER_MEMORY_MB,
        max_ground_actions: int = MAX_GROUND_ACTIONS,
    ) -> None:
        self.search = search
        self.heuristic = heuristic
        self.memory_mb = memory_mb
        self.max_ground_actions = max_ground_actions

    def solve(self, task: PlanningTask, timeout_s: float = DEFAULT_TIMEOUT_S) -> PlanResult:
        start = time.perf_counter()
        check_grounding(task, self.max_ground_actions)
        strips = strips_copy(task)
        with tempfile.TemporaryDirectory(prefix="cowp_pyperplan_") as tmp:
            domain_path, problem_path = strips.write(tmp, check=False)
            archive_planner_input(domain_path, problem_path)
            written = time.perf_counter()
            remaining = max(0.1, timeout_s - (written - start))
            outcome = run_with_deadline(
                [
                    sys.executable,
                    str(WORKER),
                    str(domain_path),
                    str(problem_path),
                    "--search",
                    self.search,
                    "--heuristic",
                    self.heuristic,
                ],
                remaining,
                Path(tmp),
                memory_mb=self.memory_mb,
            )
        seconds = time.perf_counter() - start
        if outcome.timed_out:
            return PlanResult(
                PlanStatus.TIMEOUT, self.name, seconds, detail=f"no answer in {timeout_s:g} s"
            )
        if outcome.returncode == OUT_OF_MEMORY_EXIT:
            raise PlannerError(out_of_memory_message(self.memory_mb, _peak_of(outcome.stderr)))
        if outcome.returncode != 0:
            raise PlannerError(
                f"pyperplan failed on {task.source} (exit {outcome.returncode}):\n"
                f"{tail(outcome.stderr)}"
            )
        answer = json.loads(outcome.stdout)
        extra = {
            "ground_s": answer["ground_s"],
            "search_s": answer["search_s"],
            "write_s": written - start,
            "peak_mb": answer.get("peak_mb"),
        }
        if not answer["found"]:
            return PlanResult(
                PlanStatus.NO_PLAN,
                self.name,
                seconds,
                detail="greedy best-first search exhausted the reachable states",
                extra=extra,
            )
        steps = tuple(PlanStep.parse(s) for s in answer["plan"])
        return PlanResult(PlanStatus.FOUND, self.name, seconds, steps, extra=extra)


def _peak_of(stderr: str) -> float | None:
    """The worker's own peak memory, from its out-of-memory note on stderr."""
    try:
        note = json.loads(stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    peak = note.get("peak_mb") if isinstance(note, dict) else None
    return float(peak) if isinstance(peak, int | float) else None
