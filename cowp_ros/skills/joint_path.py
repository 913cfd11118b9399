"""A joint path through waypoints, timed as one trajectory.

A Cartesian segment (the hand straight down onto an object, straight up with it, a
handle drawn along its front) is sent as the joint positions of a few points along the
line, solved one by one by inverse kinematics: the controller then moves the hand close
to the line instead of along the curve a single joint-space goal would take. The points
are timed by the largest joint travel between them at the arm's configured speed, and
each inner point carries the velocity of a smooth pass through it (a central difference;
zero at the end), as FollowJointTrajectory expects one of every field or none.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TimedPoint:
    time_s: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...]


def timed_path(
    start: Sequence[float],
    waypoints: Sequence[Sequence[float]],
    max_velocity_rad_s: float,
    min_duration_s: float,
) -> list[TimedPoint]:
    """The waypoints (the last one the goal) timed from `start`; the whole move takes at
    least `min_duration_s`, stretched evenly."""
    path = [tuple(float(v) for v in start), *(tuple(float(v) for v in w) for w in waypoints)]
    gaps = [
        max(abs(a - b) for a, b in zip(p, q, strict=True)) / max_velocity_rad_s
        for p, q in itertools.pairwise(path)
    ]
    total = sum(gaps)
    stretch = min_duration_s / total if 0 < total < min_duration_s else 1.0
    if total == 0:
        gaps = [min_duration_s / len(gaps)] * len(gaps)
        stretch = 1.0
    times = [0.0]
    for gap in gaps:
        times.append(times[-1] + max(gap * stretch, 1e-3))
    points = []
    for i in range(1, len(path)):
        if i == len(path) - 1:
            velocities = tuple(0.0 for _ in path[i])
        else:
            span = times[i + 1] - times[i - 1]
            velocities = tuple(
                (b - a) / span for a, b in zip(path[i - 1], path[i + 1], strict=True)
            )
        points.append(TimedPoint(times[i], path[i], velocities))
    return points
