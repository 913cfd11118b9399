"""Planners behind one interface: Fast Downward (the default where installed) and pyperplan.

`make_planner("auto" | "pyperplan" | "fast_downward")` gives a `Planner` (`factory.py`
says which `auto` is); `solve(task, timeout_s)` returns a `PlanResult` whose status says
found / no plan / timed out. Both run in a child process so that a deadline really
stops them.
"""

from cowp_ros.planning.factory import PLANNER_NAMES, make_planner
from cowp_ros.planning.planner import Planner, PlannerError
from cowp_ros.planning.result import PlanResult, PlanStatus, PlanStep

__all__ = [
    "PLANNER_NAMES",
    "PlanResult",
    "PlanStatus",
    "PlanStep",
    "Planner",
    "PlannerError",
    "make_planner",
]
