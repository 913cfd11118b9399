"""The one interface every planner offers (the loop's `Planner` port), and its error."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from cowp_ros.errors import CowpError
from cowp_ros.planning.result import PlanResult

if TYPE_CHECKING:  # a type: the pddl library is not imported to start a planner
    from cowp_ros.pddl import PlanningTask

DEFAULT_TIMEOUT_S = 60.0
ARCHIVE_ENV = "COWP_PDDL_ARCHIVE"
"""A folder: when set, every planner keeps a copy of the PDDL it was given there
(`NNNN-domain.pddl`, `NNNN-problem.pddl`), to see exactly what it planned on. The
fault-injection harness checks these for injected text."""
_archived = itertools.count(1)


def archive_planner_input(domain_path: Path, problem_path: Path) -> None:
    """Copy a planner's input files into $COWP_PDDL_ARCHIVE, if it is set."""
    folder = os.environ.get(ARCHIVE_ENV)
    if not folder:
        return
    number = f"{os.getpid()}-{next(_archived):04d}"
    with contextlib.suppress(OSError):  # a debugging aid must not stop planning
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(domain_path, Path(folder) / f"{number}-domain.pddl")
        shutil.copyfile(problem_path, Path(folder) / f"{number}-problem.pddl")


def request_deadline(requested: float, default_s: float, maximum_s: float) -> float:
    """The deadline to plan under when a client asks for `requested` seconds.

    0, a negative number or NaN mean "the default"; anything longer than `maximum_s`
    (infinity included) is cut to it, so no request holds a planner for ever.
    """
    if not (requested > 0):  # also NaN
        return min(default_s, maximum_s)
    return min(requested, maximum_s)


class PlannerError(CowpError):
    """A planner that could not run, or crashed on a task (not "no plan": that is a result)."""


@runtime_checkable
class Planner(Protocol):
    """Finds a plan for a task, or says there is none, within a deadline."""

    name: str

    def solve(self, task: PlanningTask, timeout_s: float = DEFAULT_TIMEOUT_S) -> PlanResult:
        """Plan for `task`; never runs past `timeout_s` (returns a TIMEOUT result)."""
        ...
