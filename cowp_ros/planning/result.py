"""What a planner hands back: the steps, how long it took, and whether it found a plan."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class PlanStatus(enum.Enum):
    """Outcome of one planner call."""

    FOUND = "found"
    NO_PLAN = "no_plan"  # the planner proved (or its complete search found) no plan
    TIMEOUT = "timeout"  # the deadline passed first: nothing is known


@dataclass(frozen=True)
class PlanStep:
    """One ground action: `fill_cup(cup_1, faucet_1)`."""

    action: str
    args: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> PlanStep:
        """Read `(fill_cup cup_1 faucet_1)` or `fill_cup cup_1 faucet_1`."""
        words = text.strip().strip("()").lower().split()
        if not words:
            raise ValueError(f"empty plan step {text!r}")
        return cls(words[0], tuple(words[1:]))

    def __str__(self) -> str:
        return f"({' '.join((self.action, *self.args))})"

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "args": list(self.args)}


@dataclass(frozen=True)
class PlanResult:
    """A planner's answer. `seconds` is wall time including process start and I/O."""

    status: PlanStatus
    planner: str
    seconds: float
    steps: tuple[PlanStep, ...] = ()
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def found(self) -> bool:
        return self.status is PlanStatus.FOUND

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "planner": self.planner,
            "seconds": round(self.seconds, 4),
            "steps": [str(s) for s in self.steps],
            "detail": self.detail,
        }
