"""Kinematics of the simulated robot: a base, a UR5e and a Hand-E that take real time.

The simulation serves the same interfaces as the robot's drivers (a goal pose and
odometry for the base, a joint trajectory topic and joint states for the arm, a
position command and a finger joint for the gripper), so the executor's skill layer
and backends are exercised unchanged. These classes hold the motion model only; the
`sim_world` node wires them to topics and advances them on a timer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class BaseSim:
    """A holonomic base that drives straight to its goal, then turns to the goal's yaw."""

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0
    speed_mps: float = 0.5
    turn_rate_rps: float = 1.0
    goal: tuple[float, float, float] | None = None
    vx: float = 0.0
    wz: float = 0.0

    def set_goal(self, x: float, y: float, yaw: float) -> None:
        self.goal = (x, y, yaw)

    def step(self, dt: float) -> None:
        self.vx = self.wz = 0.0
        if self.goal is None:
            return
        gx, gy, gyaw = self.goal
        dx, dy = gx - self.x, gy - self.y
        distance = math.hypot(dx, dy)
        if distance > 1e-3:
            travel = min(distance, self.speed_mps * dt)
            self.x += dx / distance * travel
            self.y += dy / distance * travel
            self.vx = travel / dt if dt > 0 else 0.0
            return
        error = _wrap(gyaw - self.yaw)
        if abs(error) > 1e-3:
            turn = math.copysign(min(abs(error), self.turn_rate_rps * dt), error)
            self.yaw = _wrap(self.yaw + turn)
            self.wz = turn / dt if dt > 0 else 0.0
            return
        self.goal = None


@dataclass
class ArmSim:
    """Joint positions that follow a trajectory's points at their `time_from_start`."""

    joint_names: list[str]
    positions: list[float]
    _points: list[tuple[float, list[float]]] = field(default_factory=list)
    _start: list[float] = field(default_factory=list)
    _elapsed: float = 0.0

    def follow(self, joint_names: list[str], points: list[tuple[float, list[float]]]) -> None:
        """Start a trajectory (points as (seconds from start, positions in `joint_names` order))."""
        order = [joint_names.index(name) for name in self.joint_names]
        self._points = [(t, [p[i] for i in order]) for t, p in sorted(points)]
        self._start = list(self.positions)
        self._elapsed = 0.0

    @property
    def moving(self) -> bool:
        return bool(self._points)

    def step(self, dt: float) -> None:
        if not self._points:
            return
        self._elapsed += dt
        previous_t, previous = 0.0, self._start
        for t, target in self._points:
            if self._elapsed < t:
                ratio = (self._elapsed - previous_t) / max(t - previous_t, 1e-6)
                self.positions = [
                    a + (b - a) * ratio for a, b in zip(previous, target, strict=True)
                ]
                return
            previous_t, previous = t, target
        self.positions = list(self._points[-1][1])
        self._points = []


@dataclass
class GripperSim:
    """Hand-E fingers: move at a fixed speed, and stop on an object between them.

    `position` is the finger joint (metres, 0 = closed, `max_position` = open). With an
    object between the fingers (`object_stop_m`, the finger position where they touch
    it) closing stops there, which is how the grasp check on the real gripper tells a
    grasp from an empty close.
    """

    position: float = 0.025
    max_position: float = 0.025
    speed_mps: float = 0.02
    target: float = 0.025
    object_stop_m: float | None = None

    def command(self, position: float) -> None:
        self.target = min(max(position, 0.0), self.max_position)

    def step(self, dt: float) -> None:
        target = self.target
        if self.object_stop_m is not None and target < self.object_stop_m:
            target = min(self.object_stop_m, self.max_position)
        error = target - self.position
        move = math.copysign(min(abs(error), self.speed_mps * dt), error)
        self.position += move


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi
