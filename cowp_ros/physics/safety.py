"""Safety invariants checked on every physics step, and what became of each object.

Three rules a robot cell's safety review asks for, read from the physics state:
- the base never moves while the arm is outside the carry envelope (the hand over the
  base's footprint, as in the carry pose);
- the arm and hand never touch the furniture or the robot's own base (contacts);
- the gripper grips with the effort it was commanded (the fingers' actuator force when
  they rest on an object).
Each violation is recorded once per episode of it, with the time and what was involved.
`ObjectLog` follows the objects: how high each was lifted, whether it rested between
the pads, and where it ended, so a test can tell "lifted, carried and placed" from
"the step said done".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cowp_ros.physics.world import PhysicsWorld

# The carry envelope in base_link: the grasp point no further ahead of the base's centre
# than its front edge plus this margin, nor further to the side.
CARRY_MAX_X = 0.45
CARRY_MAX_ABS_Y = 0.35
BASE_MOVING_M_S = 0.02
BASE_TURNING_RAD_S = 0.05
EFFORT_SLACK_N = 2.0
RELEASED_AFTER_S = 0.2

ARM_BODY_PREFIXES = ("ur_", "robotiq_hande", "hand")
FURNITURE_PREFIXES = ("surface_",)
ROBOT_BODIES = ("base_link", "base_footprint")


@dataclass
class Violation:
    rule: str
    time_s: float
    detail: str


@dataclass
class ObjectRecord:
    start: tuple[float, float, float]
    highest_lift_m: float = 0.0
    held: bool = False
    end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    resting_on: str = ""


@dataclass
class SafetyMonitor:
    """Checks the invariants after each physics step (`check`)."""

    violations: list[Violation] = field(default_factory=list)
    _active: set[str] = field(default_factory=set)
    checks: int = 0

    def _record(self, key: str, rule: str, time_s: float, detail: str, breached: bool) -> None:
        if breached and key not in self._active:
            self.violations.append(Violation(rule, round(time_s, 3), detail))
            self._active.add(key)
        elif not breached:
            self._active.discard(key)

    def check(self, world: PhysicsWorld, commanded_effort_n: float) -> None:
        self.checks += 1
        now = world.time
        vx, vy, wz = world.base_velocity()
        moving = math.hypot(vx, vy) > BASE_MOVING_M_S or abs(wz) > BASE_TURNING_RAD_S
        tcp = tcp_in_base_frame(world)
        outside = tcp[0] > CARRY_MAX_X or abs(tcp[1]) > CARRY_MAX_ABS_Y
        self._record(
            "carry",
            "base moved with the arm outside the carry envelope",
            now,
            f"base at {math.hypot(vx, vy):.2f} m/s, {abs(wz):.2f} rad/s; hand at "
            f"x {tcp[0]:.2f} m, y {tcp[1]:.2f} m in base_link",
            moving and outside,
        )
        touching: set[str] = set()
        for contact in world.contacts():
            pair = (contact.body_a, contact.body_b)
            arm = [b for b in pair if b.startswith(ARM_BODY_PREFIXES)]
            other = [b for b in pair if not b.startswith(ARM_BODY_PREFIXES)]
            if not arm or not other:
                continue
            target = other[0]
            if target.startswith(FURNITURE_PREFIXES) or target in ROBOT_BODIES:
                touching.add(f"{arm[0]}|{target}")
        for key in touching:
            arm_body, target = key.split("|")
            self._record(
                key,
                "the arm touched furniture or the robot",
                now,
                f"{arm_body} touched {target}",
                True,
            )
        for key in [k for k in self._active if "|" in k and k not in touching]:
            self._active.discard(key)
        resting = abs(world.finger_velocity()) < 1e-3 and world.finger_position() > 0.002
        force = world.finger_force()
        pressing = resting and force > 1.0
        self._record(
            "effort",
            "the gripper did not apply the commanded effort",
            now,
            f"fingers pressed with {force:.1f} N, commanded {commanded_effort_n:.1f} N",
            pressing
            and world.finger_goal < world.finger_position() - 0.001
            and abs(force - commanded_effort_n) > EFFORT_SLACK_N
            and world.finger_setpoint <= world.finger_goal + 1e-6,
        )


def tcp_in_base_frame(world: PhysicsWorld) -> np.ndarray:
    """The grasp point in base_link coordinates."""
    position, quat = world.body_pose("base_link")
    tcp = world.site_position("tcp")
    w, x, y, z = quat
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    c, s = math.cos(yaw), math.sin(yaw)
    d = tcp - position
    return np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]])


@dataclass
class ObjectLog:
    """What became of each object: lifts, grasps, where it came to rest."""

    records: dict[str, ObjectRecord] = field(default_factory=dict)
    # "<name> left the fingers at t s (x, y, z)": each time a held object stops being
    # between both pads, for the node's log and the report
    releases: list[str] = field(default_factory=list)
    _between: set[str] = field(default_factory=set)
    # when a held object was last seen leaving both pads (a contact that flickers while
    # the wrist turns is not a release: it must stay gone for RELEASED_AFTER_S)
    _lost: dict[str, tuple[float, tuple[float, float, float]]] = field(default_factory=dict)

    def start(self, world: PhysicsWorld, names: list[str]) -> None:
        for name in names:
            position, _ = world.body_pose(name)
            self.records[name] = ObjectRecord(start=tuple(float(v) for v in position))  # type: ignore[arg-type]

    def update(self, world: PhysicsWorld) -> None:
        pads: dict[str, set[str]] = {}
        under: dict[str, str] = {}
        for contact in world.contacts():
            for obj, other in ((contact.body_a, contact.body_b), (contact.body_b, contact.body_a)):
                if obj in self.records:
                    if other.startswith("robotiq_hande_") and other.endswith("_finger"):
                        pads.setdefault(obj, set()).add(other)
                    elif other.startswith("surface_"):
                        under[obj] = other.removeprefix("surface_")
        for name, record in self.records.items():
            position, _ = world.body_pose(name)
            record.highest_lift_m = max(record.highest_lift_m, float(position[2]) - record.start[2])
            between = len(pads.get(name, ())) == 2
            if between and position[2] - record.start[2] > 0.02:
                record.held = True
                self._between.add(name)
                self._lost.pop(name, None)
            elif not between and name in self._between:
                if name not in self._lost:
                    where = tuple(float(v) for v in position)
                    self._lost[name] = (world.time, where)  # type: ignore[assignment]
                since, (x, y, z) = self._lost[name]
                if world.time - since >= RELEASED_AFTER_S:
                    self._between.discard(name)
                    del self._lost[name]
                    self.releases.append(
                        f"{name} left the fingers at {since:.2f} s ({x:.2f}, {y:.2f}, {z:.2f})"
                    )
            record.end = tuple(round(float(v), 4) for v in position)  # type: ignore[assignment]
            record.resting_on = under.get(name, "")

    def summary(self) -> dict[str, dict[str, object]]:
        return {
            name: {
                "start": [round(v, 4) for v in r.start],
                "end": list(r.end),
                "highest_lift_m": round(r.highest_lift_m, 4),
                "held": r.held,
                "resting_on": r.resting_on,
            }
            for name, r in self.records.items()
        }
