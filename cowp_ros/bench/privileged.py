"""The oracle's explicit privileged access: the world's truth, read-only, nothing ahead.

The oracle is the benchmark's ceiling: a method that knows what every situation does
and which stand-ins people accept. It gets this object besides the robot's view, and no
other method can: the runner hands it only to the oracle's own class object
(`methods.oracle.is_oracle`: identity, never a name, so a class that copies the oracle's
`__module__` and `__qualname__` gets nothing), and a method that asks for it
(`privileged = True`) without being that class is refused with an error.

What it tells: the objects situations made unusable so far and the actions they put
beyond the robot's skills (both only once the situation was raised: the oracle does not
see the schedule), the judge's stand-ins per role and action, which objects are the
task's own in each role, and the release actions. What it does not tell: the situations
still to come.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cowp_ros.bench.simulator import TrialWorld


@dataclass(frozen=True)
class PrivilegedAccess:
    """Read-only questions about the world's truth (see the module docstring)."""

    _world: TrialWorld

    def disabled(self) -> Mapping[str, str]:
        """Objects raised situations made unusable so far -> the sentence."""
        return dict(self._world.disabled)

    def beyond_skills(self) -> Mapping[str, str]:
        """Actions raised situations put beyond the robot's skills -> the sentence."""
        return dict(self._world.beyond)

    def accepted_kinds(self, role: str, action: str) -> list[str]:
        """The kinds the judge accepts in `role` for `action`."""
        return self._world.annotation.accepted_kinds(role, action)

    def role_objects(self) -> Mapping[str, tuple[str, ...]]:
        """Role type -> the task's own objects of that type (a stand-in replaces these)."""
        return dict(self._world.role_objects)

    def release_actions(self) -> tuple[str, ...]:
        return tuple(self._world.spec.release_actions)
