"""PDDL model: load, change (the edits COWP makes), write back, and validate.

Parsing and printing go through the `pddl` library; this package adds what COWP needs on
top: typed edits that keep the domain valid, a small vocabulary of literals the rest of
the code (and the JSON report) can use without touching `pddl` objects, and a strict
identifier grammar that LLM text must pass before it becomes PDDL.
"""

from cowp_ros.pddl.identifiers import UnsafeIdentifierError, check_identifier
from cowp_ros.pddl.model import Atom, Literal, PddlLoadError, PlanningTask

__all__ = [
    "Atom",
    "Literal",
    "PddlLoadError",
    "PlanningTask",
    "UnsafeIdentifierError",
    "check_identifier",
]
