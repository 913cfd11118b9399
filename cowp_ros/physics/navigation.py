"""Base navigation in the physics world, behaving as Nav2 does with its defaults.

A goal is planned on a grid of the kitchen's footprints inflated by the robot's
radius (A*, as Nav2's NavFn/Smac planners do on the costmap), then followed by a
holonomic controller that looks ahead along the path and slows near the end. Success
is decided by a goal checker with Nav2's default tolerances (0.25 m, 0.25 rad,
nav2_params.yaml's SimpleGoalChecker), so the base stops wherever it first enters that
tolerance, as Nav2's does: the executor must check where it really stopped.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

from cowp_ros.skills.interfaces import Pose2D

# Nav2 defaults (nav2_bringup nav2_params.yaml, general_goal_checker).
NAV2_XY_GOAL_TOLERANCE = 0.25
NAV2_YAW_GOAL_TOLERANCE = 0.25


@dataclass(frozen=True)
class Footprint:
    """An obstacle's rectangle on the floor: centre, half sizes along its axes, heading."""

    x: float
    y: float
    half_x: float
    half_y: float
    yaw: float

    def distance(self, px: float, py: float) -> float:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        dx, dy = px - self.x, py - self.y
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        ox, oy = max(abs(lx) - self.half_x, 0.0), max(abs(ly) - self.half_y, 0.0)
        return math.hypot(ox, oy)


class GridPlanner:
    """A* on a grid over the floor; cells nearer an obstacle than `inflation` are blocked,
    except near the start and the goal (which lie close to furniture by design)."""

    def __init__(
        self,
        obstacles: Iterable[Footprint],
        bounds: tuple[float, float, float, float],
        *,
        resolution: float = 0.05,
        inflation: float = 0.34,
    ) -> None:
        self.obstacles = tuple(obstacles)
        self.x0, self.y0, x1, y1 = bounds
        self.resolution = resolution
        self.inflation = inflation
        self.width = math.ceil((x1 - self.x0) / resolution) + 1
        self.height = math.ceil((y1 - self.y0) / resolution) + 1
        self.clearance = [
            [self._clearance(self._centre(i, j)) for j in range(self.height)]
            for i in range(self.width)
        ]

    def _centre(self, i: int, j: int) -> tuple[float, float]:
        return self.x0 + i * self.resolution, self.y0 + j * self.resolution

    def _cell(self, x: float, y: float) -> tuple[int, int]:
        i = min(max(round((x - self.x0) / self.resolution), 0), self.width - 1)
        j = min(max(round((y - self.y0) / self.resolution), 0), self.height - 1)
        return i, j

    def _clearance(self, point: tuple[float, float]) -> float:
        return min((o.distance(*point) for o in self.obstacles), default=math.inf)

    def plan(self, start: Pose2D, goal: Pose2D) -> list[tuple[float, float]] | None:
        """Waypoints from start to goal, or None when no path exists."""
        s, g = self._cell(start.x, start.y), self._cell(goal.x, goal.y)
        near = 0.6 / self.resolution

        def free(cell: tuple[int, int]) -> bool:
            i, j = cell
            if self.clearance[i][j] >= self.inflation:
                return True
            # Near the ends the robot may pass closer, but never through furniture.
            close = math.dist(cell, s) <= near or math.dist(cell, g) <= near
            return close and self.clearance[i][j] > 0.1

        frontier: list[tuple[float, tuple[int, int]]] = [(0.0, s)]
        cost = {s: 0.0}
        came: dict[tuple[int, int], tuple[int, int]] = {}
        steps = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
        while frontier:
            _, cell = heapq.heappop(frontier)
            if cell == g:
                break
            for di, dj in steps:
                nxt = (cell[0] + di, cell[1] + dj)
                if not (0 <= nxt[0] < self.width and 0 <= nxt[1] < self.height):
                    continue
                if not free(nxt):
                    continue
                # Prefer cells away from obstacles, as an inflation cost does.
                penalty = 0.5 if self.clearance[nxt[0]][nxt[1]] < self.inflation + 0.2 else 0.0
                new = cost[cell] + math.hypot(di, dj) * (1.0 + penalty)
                if new < cost.get(nxt, math.inf):
                    cost[nxt] = new
                    came[nxt] = cell
                    heapq.heappush(frontier, (new + math.dist(nxt, g), nxt))
        if g not in cost:
            return None
        cells = [g]
        while cells[-1] != s:
            cells.append(came[cells[-1]])
        cells.reverse()
        points = [self._centre(*c) for c in cells[::4]]
        points.append((goal.x, goal.y))
        return points


@dataclass
class PathFollower:
    """Holonomic pure pursuit with a goal checker: velocity commands in the base frame."""

    path: list[tuple[float, float]]
    goal: Pose2D
    xy_tolerance: float = NAV2_XY_GOAL_TOLERANCE
    yaw_tolerance: float = NAV2_YAW_GOAL_TOLERANCE
    max_speed: float = 0.5
    max_turn: float = 1.0
    lookahead: float = 0.4
    _index: int = 0

    def remaining(self, pose: Pose2D) -> float:
        points = self.path[self._index :]
        if not points:
            return pose.distance_to(self.goal)
        total = math.dist((pose.x, pose.y), points[0])
        for a, b in itertools.pairwise(points):
            total += math.dist(a, b)
        return total

    def reached(self, pose: Pose2D) -> bool:
        return (
            pose.distance_to(self.goal) <= self.xy_tolerance
            and pose.yaw_error_to(self.goal) <= self.yaw_tolerance
        )

    def command(self, pose: Pose2D) -> tuple[float, float, float]:
        """(vx, vy, wz) toward the path's look-ahead point; zero once the goal checker
        accepts the pose."""
        if self.reached(pose):
            return 0.0, 0.0, 0.0
        while self._index < len(self.path) - 1 and (
            math.dist((pose.x, pose.y), self.path[self._index]) < self.lookahead
        ):
            self._index += 1
        tx, ty = self.path[self._index]
        dx, dy = tx - pose.x, ty - pose.y
        distance = math.hypot(dx, dy)
        left = self.remaining(pose)
        speed = min(self.max_speed, 0.8 * left + 0.05)
        if pose.distance_to(self.goal) <= self.xy_tolerance:
            speed = 0.0  # in position: turn in place (Nav2's stateful goal checker)
        vx_map, vy_map = (
            (dx / distance * speed, dy / distance * speed) if distance > 1e-6 else (0.0, 0.0)
        )
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        heading_error = math.atan2(
            math.sin(self.goal.yaw - pose.yaw), math.cos(self.goal.yaw - pose.yaw)
        )
        wz = max(-self.max_turn, min(self.max_turn, 1.5 * heading_error))
        return c * vx_map + s * vy_map, -s * vx_map + c * vy_map, wz
