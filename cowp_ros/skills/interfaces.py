"""What a skill backend promises, and the result every backend returns.

The runner drives the robot only through these protocols, so the same skill sequence
runs on Nav2 and the UR driver, on sim_world's topics, or on a test double. Every
backend call blocks until the motion ends, fails or is canceled, and always returns an
`MotionResult` whose message says what happened in words a person can act on (which topic
was silent, which server was missing, which joint was off).
"""

from __future__ import annotations

import enum
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class Status(enum.Enum):
    """How a motion (or a whole skill) ended."""

    SUCCEEDED = "succeeded"
    CANCELED = "canceled"
    FAILED = "failed"


@dataclass(frozen=True)
class MotionResult:
    """The end of one motion: its status and a sentence about it."""

    status: Status
    message: str

    @property
    def ok(self) -> bool:
        return self.status is Status.SUCCEEDED

    @classmethod
    def success(cls, message: str) -> MotionResult:
        return cls(Status.SUCCEEDED, message)

    @classmethod
    def failure(cls, message: str) -> MotionResult:
        return cls(Status.FAILED, message)

    @classmethod
    def canceled(cls, message: str) -> MotionResult:
        return cls(Status.CANCELED, message)


@dataclass(frozen=True)
class Pose2D:
    """A base pose on the map: position in metres, heading in radians."""

    x: float
    y: float
    yaw: float

    def distance_to(self, other: Pose2D) -> float:
        return math.hypot(self.x - other.x, self.y - other.y)

    def yaw_error_to(self, other: Pose2D) -> float:
        """Absolute heading difference, wrapped to [0, pi]."""
        return abs(math.atan2(math.sin(self.yaw - other.yaw), math.cos(self.yaw - other.yaw)))


@dataclass(frozen=True)
class ObjectPose:
    """An object's frame in the map: position (m) and heading (rad)."""

    x: float
    y: float
    z: float
    yaw: float
    tilt: float = 0.0  # how far its z axis leans from the vertical (rad): fallen over?


class BaseBackend(Protocol):
    """Drives the mobile base to a map pose."""

    description: str

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> MotionResult: ...


class ArmBackend(Protocol):
    """Moves the arm to a joint configuration."""

    description: str

    def move_to(
        self,
        name: str,
        positions: Sequence[float],
        cancel: threading.Event,
        via: Sequence[Sequence[float]] = (),
    ) -> MotionResult:
        """Move to `positions` (in the configured joint order), through `via` first as
        one trajectory (a Cartesian segment's inner points); `name` is for messages."""
        ...


class GripperBackend(Protocol):
    """Opens and closes the gripper; knows whether the fingers stopped on something."""

    description: str

    def open(self, cancel: threading.Event) -> MotionResult: ...

    def close(self, cancel: threading.Event, *, expect_object: bool) -> MotionResult:
        """Close; with `expect_object`, succeed only if the fingers stopped on an object."""
        ...

    def holding(self, cancel: threading.Event) -> MotionResult:
        """Succeed while the fingers still rest on an object (fail: it slipped out)."""
        ...


class CameraBackend(Protocol):
    """Confirms that the detector sees an object class."""

    description: str

    def find(self, class_name: str, cancel: threading.Event) -> MotionResult: ...


class PoseSource(Protocol):
    """Where the base really is and where objects are (TF on the robot), when known."""

    description: str

    def base_pose(self) -> Pose2D | None: ...

    def object_pose(self, name: str) -> ObjectPose | None: ...

    def known_objects(self) -> dict[str, ObjectPose]:
        """Every object whose pose is known now, by name: what stands where a put-down
        would go."""
        ...


class ObjectLocator(Protocol):
    """Finds an object near where it is expected, with the wrist camera looking there
    (a depth image, or a detector's box and a known surface height)."""

    description: str

    def locate(
        self, name: str, kind: str, expected: ObjectPose, cancel: threading.Event
    ) -> ObjectPose | None:
        """Where `name` (of class `kind`) stands, or None when it is not seen."""
        ...


@dataclass
class Backends:
    """The robot a skill runner drives: one backend per part, and what it may know."""

    base: BaseBackend
    arm: ArmBackend
    gripper: GripperBackend
    camera: CameraBackend | None  # None: detections are not verified (find = go and look)
    # None: no poses known; grasps and put-downs use the calibrated named poses
    poses: PoseSource | None = None
    # None: `look` is skipped; objects are taken where TF or the calibration puts them
    locator: ObjectLocator | None = None
