"""Fast Downward, the compiled planner shipped inside the `up-fast-downward` wheel.

We run its two programs as its driver script (the wheel's `downward/fast-downward.py`)
runs them, the translator (`fast_downward.translate`, from the wheel's
`builds/release/bin`) and then the search binary on the translator's output, under the
planner's lifeline (`lifeline.py -- --module fast_downward.translate ... --then --stdin
output.sas downward ...`): the translator runs in a fork of the lifeline, so a plan
starts one Python interpreter (the lifeline) where the driver starts two, and the driver
itself would be one more (60 ms of every call on a small problem where the search takes
7 ms); unified-planning would be a heavy dependency more. Both read our PDDL as is, ADL
and action costs included. It is the default planner where it is installed
(`factory.make_planner("auto")`).

Search: `--planner fast_downward` runs LAMA's first iteration (`--alias lama-first`:
lazy greedy best-first with hFF and landmarks, preferred operators), the configuration
users of Fast Downward plan with; the default planner (`auto`) runs the same heuristics
in an eager search (`EAGER_LAMA`), whose plans are as direct as pyperplan's. On a task
with action costs either search reads the costs (`cost_type=plusone`, as LAMA's later
iterations do), so that its heuristics prefer cheap actions (lama-first itself counts
every action as one); a greedy search promises no cheapest plan (benchmarks/results/ipc
gives the costs beside lama-first's).

Started early: `cowp plan --domain D --problem P` starts Fast Downward on the files'
text as its user wrote it (`start_on_text`) before the project's modules and the `pddl`
library are imported and the task parsed and checked, so that the two run side by side
on a two-core machine; `solve(task, started=...)` then checks the task as it always does
(refused: the run is stopped, nothing left running) and takes the run's answer. What
decides is the text alone, never which side ended first: a text Fast Downward refuses
(a requirement it does not read, which the project's reader leaves out) is planned
again as the `pddl` library writes it back, and a cost type guessed wrongly from the
text is planned again with the task's own.
"""

from __future__ import annotations

import importlib.util
import re
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cowp_ros.limits import MAX_GROUND_ACTIONS, PLANNER_MEMORY_MB
from cowp_ros.planning.lifeline import MODULE, STDIN, THEN
from cowp_ros.planning.planner import DEFAULT_TIMEOUT_S, PlannerError, archive_planner_input
from cowp_ros.planning.process import (
    ProcessOutcome,
    Running,
    guarded,
    start_with_deadline,
    stop,
    tail,
    wait_for,
)
from cowp_ros.planning.result import PlanResult, PlanStatus, PlanStep

if TYPE_CHECKING:  # the pddl library and lark cost `cowp plan` 50 ms to import, and a
    # plan started on the files' text runs while they import (`start_on_text`)
    from cowp_ros.pddl import PlanningTask

_LAMA_HEURISTICS = (
    "let(hlm, eval_modify_costs(landmark_sum(lm_factory=lm_reasonable_orders_hps(lm_rhw()),"
    "pref=false),cost_type={cost}),"
    "let(hff, eval_modify_costs(ff(),cost_type={cost}),"
)
LAMA_FIRST = (
    _LAMA_HEURISTICS + "lazy_greedy([hff,hlm],preferred=[hff,hlm],cost_type={cost},"
    "reopen_closed=false)))"
)
"""`--alias lama-first` of the driver (driver/aliases.py), spelled out, with its cost
type left open: `one` is lama-first itself, `plusone` reads action costs (each action
costs its cost plus one). `--planner fast_downward` plans with it."""
EAGER_LAMA = _LAMA_HEURISTICS + "eager_greedy([hff,hlm],preferred=[hff,hlm],cost_type={cost})))"
"""LAMA-first's heuristics (hFF, landmarks) and preferred operators in an eager greedy
best-first search, the default planner's (`factory.py`). Eager search computes every
successor's estimate before it chooses one, as pyperplan's greedy best-first search
does; lazy search (LAMA-first) takes a preferred successor on its parent's estimate and
learns only later that it led nowhere, and that detour stays in the plan: on a
water-the-plant task it walked to the plant and back before fetching water. On every
task the project ships, and every replan of their scenarios, the eager search's plans
are as long as pyperplan's; on the IPC problems of `benchmarks/bench_ipc.py` it takes
about LAMA-first's time."""
INSTALL_HINT = "pip install up-fast-downward==1.0.0 (listed in requirements/core.txt)"

# https://www.fast-downward.org/ExitCodes
SOLVED = 0
UNSOLVABLE = {10, 11, 12}  # translator proved it; search proved it; incomplete search gave up
OUT_OF_TIME = {21, 23}  # translator, search
OUT_OF_MEMORY = {20, 22, 24}  # translator, search, search out of memory and time
TRANSLATOR_CRASH = 1  # an uncaught exception (the driver calls it 30)
ANSWERS = {SOLVED, *UNSOLVABLE, *OUT_OF_TIME, *OUT_OF_MEMORY}
"""Exit codes that answer the task; any other (an input Fast Downward refuses, a
crash) is not an answer about the task itself."""


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


def bin_folder() -> Path | None:
    """The wheel's `builds/release/bin`: the search binary and the translator package."""
    driver = driver_path()
    return driver.parent / "builds" / "release" / "bin" if driver is not None else None


def is_available() -> bool:
    """True when the Fast Downward search binary and its translator are installed."""
    folder = bin_folder()
    return (
        folder is not None
        and (folder / "downward").is_file()
        and (folder / "fast_downward" / "translate").is_dir()
    )


class FastDownwardPlanner:
    """`Planner` over Fast Downward; `search` is a Fast Downward search string (None:
    `template` with its cost type, `one`, or `plusone` where the task has action costs;
    lama-first unless said)."""

    name = "fast_downward"

    def __init__(
        self,
        search: str | None = None,
        *,
        template: str = LAMA_FIRST,
        memory_mb: int = PLANNER_MEMORY_MB,
        max_ground_actions: int = MAX_GROUND_ACTIONS,
    ) -> None:
        folder = bin_folder()
        if folder is None or not is_available():
            raise PlannerError("Fast Downward is not installed", hint=INSTALL_HINT)
        self.bin = folder
        self.search = search
        self.template = template
        self.memory_mb = memory_mb
        self.max_ground_actions = max_ground_actions

    def start_on_text(
        self, domain_text: str, problem_text: str, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> StartedPlan:
        """Start planning on a domain's and a problem's text as its user wrote them,
        before this project has parsed or checked them: `solve(task, started=...)`
        then checks the task parsed from the same text while Fast Downward translates
        and searches on the other core, and refuses as it always does (the planner
        stopped) or takes its answer. `cowp plan --domain D --problem P` starts so."""
        costs = "total-cost" in _COMMENT.sub("", domain_text).lower()
        cost_type = "plusone" if costs else "one"
        return self._start(domain_text, problem_text, cost_type, timeout_s)

    def _start(
        self, domain_text: str, problem_text: str, cost_type: str, timeout_s: float
    ) -> StartedPlan:
        """Write the texts into a fresh folder and start the translator and the search
        on them, under the lifeline, the memory cap and `timeout_s`."""
        started = time.perf_counter()
        folder = tempfile.TemporaryDirectory(prefix="cowp_fd_")
        try:
            workdir = Path(folder.name)
            domain_path, problem_path = workdir / "domain.pddl", workdir / "problem.pddl"
            domain_path.write_text(domain_text)
            problem_path.write_text(problem_text)
            archive_planner_input(domain_path, problem_path)
            written = time.perf_counter()
            running = start_with_deadline(
                self._command(workdir, cost_type),
                max(0.1, timeout_s - (written - started)),
                workdir,
                memory_mb=self.memory_mb,
                env={"PYTHONPATH": str(self.bin)},
            )
        except BaseException:
            folder.cleanup()
            raise
        return StartedPlan(folder, running, cost_type, started, written)

    def _command(self, workdir: Path, cost_type: str) -> list[str]:
        sas = str(workdir / "output.sas")
        return guarded(
            [
                # in the guard's own process: one interpreter start fewer
                MODULE,
                "fast_downward.translate",
                str(workdir / "domain.pddl"),
                str(workdir / "problem.pddl"),
                "--sas-file",
                sas,
                THEN,
                STDIN,
                sas,
                str(self.bin / "downward"),
                "--search",
                self.search or self.template.format(cost=cost_type),
                "--internal-plan-file",
                str(workdir / "plan.txt"),
            ]
        )

    def solve(
        self,
        task: PlanningTask,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        started: StartedPlan | None = None,
    ) -> PlanResult:
        """Plan for `task`; with `started` (`start_on_text` on the text `task` was
        parsed from), check `task` and take that run's answer: the task as its user
        wrote it goes to Fast Downward, and only when Fast Downward refuses that text (a
        requirement it does not read, which the project's reader leaves out) is the
        task written back by the `pddl` library and planned again, in the time left."""
        from cowp_ros.planning.budget import check_grounding

        begun = started.started if started is not None else time.perf_counter()
        cost_type = "plusone" if task.has_action_costs else "one"
        try:
            check_grounding(task, self.max_ground_actions)
        except BaseException:
            if started is not None:
                started.stop()
            raise
        if started is not None:
            if started.cost_type == cost_type:
                outcome, plan_text = started.wait()
                if outcome.timed_out or outcome.returncode in ANSWERS:
                    return self._answer(task, timeout_s, begun, started, outcome, plan_text)
            started.stop()
        left = timeout_s - (time.perf_counter() - begun)
        run = self._start(task.domain_text(), task.problem_text(), cost_type, left)
        outcome, plan_text = run.wait()
        return self._answer(task, timeout_s, begun, run, outcome, plan_text)

    def _answer(
        self,
        task: PlanningTask,
        timeout_s: float,
        begun: float,
        run: StartedPlan,
        outcome: ProcessOutcome,
        plan_text: str,
    ) -> PlanResult:
        from cowp_ros.planning.budget import out_of_memory_message

        seconds = time.perf_counter() - begun
        extra = {"write_s": run.written - run.started, "exit_code": outcome.returncode}
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
        cost = _plan_cost(plan_text)
        if cost is not None and task.has_action_costs:
            extra["cost"] = cost
        return PlanResult(PlanStatus.FOUND, self.name, seconds, steps, extra=extra)


_COMMENT = re.compile(r";[^\n]*")


class StartedPlan:
    """Fast Downward running in a temporary folder of its own, with the cost type it
    was started with. One started on a task's text before the task was parsed
    (`start_on_text`) is taken over by `solve(task, started=...)`; `stop()` ends it
    (safe to call again), as a command does whatever happened in between."""

    def __init__(
        self,
        folder: tempfile.TemporaryDirectory[str],
        running: Running,
        cost_type: str,
        started: float,
        written: float,
    ) -> None:
        self.folder = folder
        self.running = running
        self.cost_type = cost_type
        self.started = started
        self.written = written

    def wait(self) -> tuple[ProcessOutcome, str]:
        """Its outcome and the plan it wrote (empty: none); the folder is removed."""
        try:
            outcome = wait_for(self.running)
            plan_path = Path(self.folder.name) / "plan.txt"
            plan_text = plan_path.read_text() if plan_path.is_file() else ""
        finally:
            self.folder.cleanup()
        return outcome, plan_text

    def stop(self) -> None:
        """Kill it whole (translator and search) and remove its folder."""
        try:
            stop(self.running)
        finally:
            self.folder.cleanup()


def _plan_cost(plan_text: str) -> int | None:
    """The cost Fast Downward writes under a plan (`; cost = 12 (general cost)`)."""
    for line in plan_text.splitlines():
        if line.startswith("; cost ="):
            words = line.split()
            if len(words) > 3 and words[3].isdigit():
                return int(words[3])
    return None
