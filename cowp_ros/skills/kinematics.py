"""UR5e kinematics from Universal Robots' published DH parameters: forward and analytic
inverse kinematics, with the joint limits of ur_description's ur5e configuration.

The same figures build the physics world's arm (cowp_ros/physics/scene.py) and let the
skill layer place the gripper where an object is, so the simulated arm and the arm the
executor reasons about cannot drift apart. Frames follow ur_description: `base_link`
(x forward along the arm at zero, z up), the DH base frame turned half a turn about z,
and `tool0` (z out of the flange).

The inverse kinematics is the closed-form solution of the UR family (three parallel
joint axes, a spherical-like wrist offset): up to eight solutions, returned in joint
limits and sorted by distance to a reference configuration, so a caller takes the one
closest to where the arm is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# UR5e DH parameters (Universal Robots, "DH parameters for calculations of kinematics
# and dynamics"), metres and radians.
D = (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996)
A = (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0)
ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
# Link masses (kg), same source; centres of mass are taken at the links' middles.
MASSES = (3.761, 8.058, 2.846, 1.37, 1.3, 0.365)
# ur_description config/ur5e/joint_limits.yaml: position (rad), velocity (rad/s),
# effort (N m).
POSITION_LIMITS = (
    (-2 * math.pi, 2 * math.pi),
    (-2 * math.pi, 2 * math.pi),
    (-math.pi, math.pi),
    (-2 * math.pi, 2 * math.pi),
    (-2 * math.pi, 2 * math.pi),
    (-2 * math.pi, 2 * math.pi),
)
VELOCITY_LIMITS = (math.pi,) * 6
EFFORT_LIMITS = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)
JOINTS = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)

# base_link -> DH base frame: half a turn about z (ur_description's base_link_inertia).
BASE_TO_DH = np.diag([-1.0, -1.0, 1.0, 1.0])


def dh(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """One DH transform: Rot_z(theta) Trans_z(d) Trans_x(a) Rot_x(alpha)."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array(
        [
            [ct, -st * ca, st * sa, a * ct],
            [st, ct * ca, -ct * sa, a * st],
            [0.0, sa, ca, d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def forward(q: Sequence[float]) -> np.ndarray:
    """tool0 in base_link (4x4) for joint positions `q`."""
    transform = BASE_TO_DH.copy()
    for i in range(6):
        transform = transform @ dh(q[i], D[i], A[i], ALPHA[i])
    return transform


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


def _solutions_dh(target: np.ndarray) -> list[tuple[float, ...]]:
    """Every closed-form solution for `target` (tool0 in the DH base frame)."""
    d1, d4, d5, d6 = D[0], D[3], D[4], D[5]
    a2, a3 = A[1], A[2]
    p05 = target @ np.array([0.0, 0.0, -d6, 1.0])
    radius = math.hypot(p05[0], p05[1])
    if radius < abs(d4):
        return []
    psi = math.atan2(p05[1], p05[0])
    phi = math.acos(max(-1.0, min(1.0, d4 / radius)))
    solutions: list[tuple[float, ...]] = []
    inverse = np.linalg.inv(target)
    for t1 in (psi + phi + math.pi / 2, psi - phi + math.pi / 2):
        s1, c1 = math.sin(t1), math.cos(t1)
        cos5 = (target[0, 3] * s1 - target[1, 3] * c1 - d4) / d6
        if abs(cos5) > 1.0 + 1e-9:
            continue
        base5 = math.acos(max(-1.0, min(1.0, cos5)))
        for t5 in (base5, -base5):
            s5 = math.sin(t5)
            if abs(s5) < 1e-9:  # wrist singularity: any t6 works, keep 0
                t6 = 0.0
            else:
                t6 = math.atan2(
                    (-inverse[1, 0] * s1 + inverse[1, 1] * c1) / s5,
                    (inverse[0, 0] * s1 - inverse[0, 1] * c1) / s5,
                )
            t01 = dh(t1, d1, 0.0, ALPHA[0])
            t45 = dh(t5, d5, 0.0, ALPHA[4])
            t56 = dh(t6, d6, 0.0, ALPHA[5])
            t14 = np.linalg.inv(t01) @ target @ np.linalg.inv(t45 @ t56)
            p13 = t14 @ np.array([0.0, -d4, 0.0, 1.0])
            length = math.hypot(p13[0], p13[1], p13[2])
            cos3 = (length**2 - a2**2 - a3**2) / (2 * a2 * a3)
            if abs(cos3) > 1.0 + 1e-9:
                continue
            base3 = math.acos(max(-1.0, min(1.0, cos3)))
            for t3 in (base3, -base3):
                t2 = -math.atan2(p13[1], -p13[0]) + math.asin(
                    max(-1.0, min(1.0, a3 * math.sin(t3) / length))
                )
                t12 = dh(t2, 0.0, a2, ALPHA[1])
                t23 = dh(t3, 0.0, a3, ALPHA[2])
                t34 = np.linalg.inv(t12 @ t23) @ t14
                t4 = math.atan2(t34[1, 0], t34[0, 0])
                solutions.append(tuple(_wrap(t) for t in (t1, t2, t3, t4, t5, t6)))
    return solutions


def _nearest_in_limits(solution: Sequence[float], reference: Sequence[float]) -> tuple[float, ...]:
    """`solution` with each joint moved by whole turns to lie nearest `reference`,
    within the joint's limits."""
    result = []
    for angle, ref, (low, high) in zip(solution, reference, POSITION_LIMITS, strict=True):
        best = None
        for turns in (-2, -1, 0, 1, 2):
            candidate = angle + turns * 2 * math.pi
            if low - 1e-9 <= candidate <= high + 1e-9 and (
                best is None or abs(candidate - ref) < abs(best - ref)
            ):
                best = candidate
        if best is None:
            return ()
        result.append(best)
    return tuple(result)


@dataclass(frozen=True)
class IkSolution:
    """One configuration for a target, and how far it is from the reference."""

    positions: tuple[float, ...]
    distance: float


def inverse(
    target: np.ndarray, reference: Sequence[float], *, tolerance_m: float = 1e-6
) -> list[IkSolution]:
    """Configurations that put tool0 at `target` (4x4 in base_link), within joint
    limits, closest to `reference` first; each is checked by forward kinematics."""
    in_dh = np.linalg.inv(BASE_TO_DH) @ target
    found: list[IkSolution] = []
    for raw in _solutions_dh(in_dh):
        positions = _nearest_in_limits(raw, reference)
        if not positions:
            continue
        reached = forward(positions)
        if np.linalg.norm(reached[:3, 3] - target[:3, 3]) > max(tolerance_m, 1e-4):
            continue
        if np.abs(reached[:3, :3] - target[:3, :3]).max() > 1e-3:
            continue
        distance = max(abs(p - r) for p, r in zip(positions, reference, strict=True))
        found.append(IkSolution(positions, distance))
    found.sort(key=lambda s: s.distance)
    return found


def top_down(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    """tool0 pose pointing straight down (z to the floor) at (x, y, z), turned `yaw`
    about the vertical: the pose of a top-down grasp."""
    c, s = math.cos(yaw), math.sin(yaw)
    # z down; x axis at yaw in the plane; y completes a right-handed frame.
    return np.array(
        [
            [c, s, 0.0, x],
            [s, -c, 0.0, y],
            [0.0, 0.0, -1.0, z],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )
