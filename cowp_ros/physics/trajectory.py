"""Joint trajectories as joint_trajectory_controller plays them, with its tolerances.

A trajectory starts from where the joints are; each segment to the next point is a
cubic (Hermite) in time when the points give velocities (zero velocities make a move
that starts and stops smoothly), linear otherwise. While it plays, the path tolerance
is checked at every sample; at its end the goal tolerance is given goal_time_tolerance
to be met. The result codes are control_msgs/FollowJointTrajectory's
(docs/kilted_interfaces.md), so the physics world answers as the UR driver does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# control_msgs/action/FollowJointTrajectory result codes.
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5


@dataclass(frozen=True)
class Point:
    time_s: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Tolerances:
    """Per-joint position tolerances (rad; 0 = not checked) and the goal time margin."""

    path: tuple[float, ...]
    goal: tuple[float, ...]
    goal_time_s: float


@dataclass(frozen=True)
class Verdict:
    code: int
    message: str


class PlayingTrajectory:
    """One trajectory being played from `start`; `sample(t)` gives the set points."""

    def __init__(
        self,
        start: Sequence[float],
        points: Sequence[Point],
        tolerances: Tolerances,
        joint_names: Sequence[str],
    ) -> None:
        self.start = tuple(start)
        self.points = tuple(points)
        self.tolerances = tolerances
        self.joint_names = tuple(joint_names)
        self.duration = self.points[-1].time_s if self.points else 0.0

    def sample(self, t: float) -> tuple[float, ...]:
        """Desired positions at `t` seconds after the start."""
        previous_t, previous_p = 0.0, self.start
        previous_v: tuple[float, ...] | None = tuple(0.0 for _ in self.start)
        for point in self.points:
            if t < point.time_s:
                span = max(point.time_s - previous_t, 1e-9)
                u = (t - previous_t) / span
                if point.velocities is None or previous_v is None:
                    return tuple(
                        a + (b - a) * u for a, b in zip(previous_p, point.positions, strict=True)
                    )
                h00, h10 = 2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u
                h01, h11 = -2 * u**3 + 3 * u**2, u**3 - u**2
                return tuple(
                    h00 * a + h10 * span * va + h01 * b + h11 * span * vb
                    for a, b, va, vb in zip(
                        previous_p, point.positions, previous_v, point.velocities, strict=True
                    )
                )
            previous_t, previous_p, previous_v = point.time_s, point.positions, point.velocities
        return self.points[-1].positions if self.points else self.start

    def check(self, t: float, actual: Sequence[float]) -> Verdict | None:
        """A verdict once the trajectory has ended (or broke its path tolerance), else None."""
        desired = self.sample(t)
        if t <= self.duration:
            for name, want, have, tol in zip(
                self.joint_names, desired, actual, self.tolerances.path, strict=True
            ):
                if tol > 0 and abs(want - have) > tol:
                    return Verdict(
                        PATH_TOLERANCE_VIOLATED,
                        f"{name} is {abs(want - have):.3f} rad from its path (tolerance {tol:g})",
                    )
            return None
        goal = self.points[-1].positions
        misses = [
            (name, abs(g - a), tol)
            for name, g, a, tol in zip(
                self.joint_names, goal, actual, self.tolerances.goal, strict=True
            )
            if tol > 0 and abs(g - a) > tol
        ]
        if not misses:
            return Verdict(SUCCESSFUL, "")
        if t <= self.duration + self.tolerances.goal_time_s:
            return None
        name, error, tol = max(misses, key=lambda m: m[1])
        return Verdict(
            GOAL_TOLERANCE_VIOLATED,
            f"{name} ended {error:.3f} rad from its goal (tolerance {tol:g})",
        )


def validate(
    names: Sequence[str], expected: Sequence[str], points: Sequence[Point]
) -> Verdict | None:
    """The controller's goal checks: known joints, times increasing, sizes matching."""
    unknown = [n for n in names if n not in expected]
    if unknown or len(set(names)) != len(names):
        return Verdict(INVALID_JOINTS, f"unknown or repeated joints {unknown or list(names)}")
    if not points:
        return Verdict(INVALID_GOAL, "the trajectory has no points")
    last = -math.inf
    for point in points:
        if len(point.positions) != len(names):
            return Verdict(INVALID_GOAL, "a point's positions do not match the joint names")
        if point.velocities is not None and len(point.velocities) != len(names):
            return Verdict(INVALID_GOAL, "a point's velocities do not match the joint names")
        if point.time_s <= last or point.time_s < 0:
            return Verdict(INVALID_GOAL, "time_from_start must increase from point to point")
        last = point.time_s
    return None
