"""config/robot.yaml loaded into typed, validated settings.

robot.yaml is the contract between the executor and whatever serves the robot's topics
(sim_world, Gazebo, the real drivers); reading it in one place, with errors that name
the key, keeps a typo from becoming a robot that silently waits on the wrong topic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.skills.interfaces import Pose2D


@dataclass(frozen=True)
class BaseConfig:
    frame_id: str
    goal_topic: str
    odom_topic: str
    nav2_action: str
    position_tolerance_m: float
    yaw_tolerance_rad: float
    locations: dict[str, Pose2D]
    # Where the executor reads the base's pose after Nav2 says it arrived (TF), and
    # the velocity topic of its one correcting approach ("" = no correction).
    pose_frame: str = "base_link"
    cmd_vel_topic: str = ""


@dataclass(frozen=True)
class ArmConfig:
    controller: str
    trajectory_topic: str
    follow_joint_trajectory_action: str
    joint_states_topic: str
    joint_names: tuple[str, ...]
    joint_tolerance_rad: float
    max_joint_velocity_rad_s: float
    min_move_duration_s: float
    poses: dict[str, tuple[float, ...]]
    # The UR driver's speed scaling (std_msgs/Float64, percent); "" = none (Gazebo).
    speed_scaling_topic: str = ""
    # Deadlines treat a lower scaling (a paused program) as this, so a step still ends.
    min_speed_scaling: float = 0.05
    # The named pose the arm takes before the base drives ("" = none).
    carry_pose: str = ""
    # ur_base_link in base_footprint, the base's frame on the floor (m).
    mount: tuple[float, float, float] = (0.1, 0.0, 0.8)

    def move_duration(self, start: tuple[float, ...], goal: tuple[float, ...]) -> float:
        """Seconds for a move: the largest joint travel at the configured speed."""
        travel = max((abs(a - b) for a, b in zip(start, goal, strict=True)), default=0.0)
        return max(self.min_move_duration_s, travel / self.max_joint_velocity_rad_s)


@dataclass(frozen=True)
class GripperConfig:
    controller: str
    command_topic: str
    gripper_action: str
    max_effort_n: float
    joint_states_topic: str
    finger_joint: str
    open_position_m: float
    closed_position_m: float
    position_tolerance_m: float
    settle_time_s: float
    grasp_threshold_m: float
    # Fingers that have not moved this long after a command are judged where they are
    # (blocked, or already resting on the object); see skills/finger_rest.py.
    response_time_s: float = 2.0
    # The grasp point between the pads, from tool0 along its z (m).
    tcp_from_tool0_m: float = 0.1325
    # The gripper's force range (N) when its driver takes the force as a fraction of it
    # (the Hand-E's); None: the driver takes newtons.
    force_range_n: tuple[float, float] | None = None

    def effort_command(self) -> float:
        """The grip force as the driver's force command takes it."""
        if self.force_range_n is None:
            return self.max_effort_n
        low, high = self.force_range_n
        return min(1.0, max(0.0, (self.max_effort_n - low) / (high - low)))

    def effort_newtons(self, command: float) -> float:
        """The force in newtons that a driver's force `command` asks for."""
        if self.force_range_n is None:
            return command
        low, high = self.force_range_n
        return low + min(1.0, max(0.0, command)) * (high - low)


@dataclass(frozen=True)
class SurfaceConfig:
    """Work surfaces at the named locations: height, and object spots (x ahead, y left
    of each location's base pose), the first the one the calibrated grasp reaches. At
    the floor locations there is no surface: an object is put down on the floor, at the
    floor spots (closer in: the arm reaches less far down)."""

    height: float = 0.75
    spots: tuple[tuple[float, float], ...] = ((0.804, 0.133),)
    floor_locations: frozenset[str] = frozenset(
        {"charging_dock", "dining_area", "outlet", "sofa", "chair"}
    )
    floor_spots: tuple[tuple[float, float], ...] = ((0.6, 0.1), (0.6, -0.1))
    # Each surface as a box for the arm's clearance check: its front edge this far ahead
    # of the location's base pose, this deep and wide, from the floor to `height`.
    front_m: float = 0.45
    depth_m: float = 0.5
    width_m: float = 1.0

    def on_floor(self, location: str) -> bool:
        return location in self.floor_locations

    def put_down_spot(self, location: str, index: int) -> tuple[tuple[float, float], float]:
        """The `index`th put-down spot at `location` (x ahead, y left of its base pose)
        and the height it stands at."""
        if self.on_floor(location):
            return self.floor_spots[index % len(self.floor_spots)], 0.0
        return self.spots[index % len(self.spots)], self.height


@dataclass(frozen=True)
class CameraConfig:
    image_topic: str
    detections_topic: str
    # A depth image registered to the wrist camera and its CameraInfo ("" = none), in
    # `optical_frame` (on TF): the executor's `look` (its look_with_depth parameter).
    depth_topic: str = ""
    depth_info_topic: str = ""
    optical_frame: str = "wrist_camera_optical_frame"
    # The colour image's CameraInfo: where the detector's boxes point (the executor's
    # look_with_detections parameter, for a camera without depth).
    info_topic: str = "/wrist_camera/camera_info"


@dataclass(frozen=True)
class RobotConfig:
    path: Path
    base: BaseConfig
    arm: ArmConfig
    gripper: GripperConfig
    camera: CameraConfig
    sim: dict[str, Any]
    surfaces: SurfaceConfig = SurfaceConfig()


class _Reader:
    """Typed access to one section of the file; errors name `section.key` and the file."""

    def __init__(self, path: Path, section: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise CowpError(f"{path}: '{section}' must be a mapping")
        self.path, self.section, self.data = path, section, data

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise CowpError(f"{path_key(self.path, self.section, key)} is missing")
        return self.data[key]

    def text(self, key: str, *, may_be_empty: bool = False) -> str:
        value = self._get(key)
        if not isinstance(value, str) or not (value or may_be_empty):
            raise CowpError(f"{path_key(self.path, self.section, key)} must be a non-empty string")
        return value

    def number(self, key: str, *, positive: bool = True) -> float:
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CowpError(f"{path_key(self.path, self.section, key)} must be a number")
        if positive and value <= 0:
            raise CowpError(f"{path_key(self.path, self.section, key)} must be > 0")
        return float(value)

    def text_or(self, key: str, default: str) -> str:
        """An optional text (files written before the key existed omit it)."""
        return self.text(key, may_be_empty=True) if key in self.data else default

    def number_or(self, key: str, default: float) -> float:
        """An optional positive number (files written before the key existed omit it)."""
        return self.number(key) if key in self.data else default

    def mapping(self, key: str) -> dict[str, Any]:
        value = self._get(key)
        if not isinstance(value, dict) or not value:
            raise CowpError(f"{path_key(self.path, self.section, key)} must be a non-empty mapping")
        return value


def path_key(path: Path, section: str, key: str) -> str:
    return f"{path}: {section}.{key}"


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML file that must hold a mapping; a missing or broken file says so."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise CowpError(f"configuration file not found: {path}") from err
    except yaml.YAMLError as err:
        raise CowpError(f"{path} is not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise CowpError(f"{path} must hold a YAML mapping at the top level")
    return data


def _pose(path: Path, name: str, value: Any) -> Pose2D:
    if not isinstance(value, dict) or not {"x", "y", "yaw"} <= set(value):
        raise CowpError(f"{path}: base.locations.{name} must be {{x: .., y: .., yaw: ..}}")
    try:
        return Pose2D(float(value["x"]), float(value["y"]), float(value["yaw"]))
    except (TypeError, ValueError) as err:
        raise CowpError(f"{path}: base.locations.{name} must hold numbers") from err


def load_robot_config(path: Path) -> RobotConfig:
    """Read and validate robot.yaml."""
    data = read_yaml(path)
    base = _Reader(path, "base", data.get("base"))
    arm = _Reader(path, "arm", data.get("arm"))
    gripper = _Reader(path, "gripper", data.get("gripper"))
    camera = _Reader(path, "camera", data.get("camera"))

    joint_names = arm._get("joint_names")
    if not isinstance(joint_names, list) or not all(isinstance(n, str) for n in joint_names):
        raise CowpError(f"{path_key(path, 'arm', 'joint_names')} must be a list of names")
    poses: dict[str, tuple[float, ...]] = {}
    for name, value in arm.mapping("poses").items():
        ok = isinstance(value, list) and len(value) == len(joint_names)
        if not ok or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in value):
            raise CowpError(
                f"{path}: arm.poses.{name} must list {len(joint_names)} joint positions "
                f"(in arm.joint_names order)"
            )
        poses[str(name)] = tuple(float(v) for v in value)

    mount = arm.data.get("mount", [0.1, 0.0, 0.8])
    if not (isinstance(mount, list) and len(mount) == 3 and all(_finite(v) for v in mount)):
        raise CowpError(f"{path_key(path, 'arm', 'mount')} must be [x, y, z] in metres")
    surfaces = _surfaces(path, data.get("surfaces"))
    carry_pose = str(arm.data.get("carry_pose", ""))
    if carry_pose and carry_pose not in poses:
        raise CowpError(
            f"{path_key(path, 'arm', 'carry_pose')} names '{carry_pose}', which is not "
            f"in arm.poses ({', '.join(sorted(poses))})"
        )
    if "gripper_command_action" in gripper.data and "gripper_action" not in gripper.data:
        raise CowpError(
            f"{path}: gripper.gripper_command_action was renamed gripper.gripper_action",
            hint="rename the key; it names the gripper controller's action "
            "(/gripper_action_controller/gripper_cmd with the Hand-E driver)",
        )
    min_scaling = arm.number("min_speed_scaling")
    if min_scaling > 1.0:
        raise CowpError(f"{path_key(path, 'arm', 'min_speed_scaling')} must be in (0, 1]")
    open_m = gripper.number("open_position_m")
    closed_m = gripper.number("closed_position_m", positive=False)
    threshold = gripper.number("grasp_threshold_m", positive=False)
    if not closed_m <= threshold < open_m:
        raise CowpError(
            f"{path}: gripper positions must satisfy "
            "closed_position_m <= grasp_threshold_m < open_position_m"
        )
    return RobotConfig(
        path=path,
        base=BaseConfig(
            frame_id=base.text("frame_id"),
            goal_topic=base.text("goal_topic"),
            odom_topic=base.text("odom_topic"),
            nav2_action=base.text("nav2_action"),
            position_tolerance_m=base.number("position_tolerance_m"),
            yaw_tolerance_rad=base.number("yaw_tolerance_rad"),
            locations={
                str(name): _pose(path, str(name), value)
                for name, value in base.mapping("locations").items()
            },
            pose_frame=str(base.data.get("pose_frame", "base_link")),
            cmd_vel_topic=str(base.data.get("cmd_vel_topic", "")),
        ),
        arm=ArmConfig(
            controller=arm.text("controller"),
            trajectory_topic=arm.text("trajectory_topic"),
            follow_joint_trajectory_action=arm.text("follow_joint_trajectory_action"),
            joint_states_topic=arm.text("joint_states_topic"),
            joint_names=tuple(joint_names),
            joint_tolerance_rad=arm.number("joint_tolerance_rad"),
            max_joint_velocity_rad_s=arm.number("max_joint_velocity_rad_s"),
            min_move_duration_s=arm.number("min_move_duration_s"),
            poses=poses,
            speed_scaling_topic=arm.text("speed_scaling_topic", may_be_empty=True),
            min_speed_scaling=min_scaling,
            carry_pose=carry_pose,
            mount=(float(mount[0]), float(mount[1]), float(mount[2])),
        ),
        gripper=GripperConfig(
            controller=gripper.text("controller"),
            command_topic=gripper.text("command_topic"),
            gripper_action=gripper.text("gripper_action"),
            max_effort_n=gripper.number("max_effort_n"),
            joint_states_topic=gripper.text("joint_states_topic"),
            finger_joint=gripper.text("finger_joint"),
            open_position_m=open_m,
            closed_position_m=closed_m,
            position_tolerance_m=gripper.number("position_tolerance_m"),
            settle_time_s=gripper.number("settle_time_s"),
            grasp_threshold_m=threshold,
            response_time_s=gripper.number_or("response_time_s", GripperConfig.response_time_s),
            tcp_from_tool0_m=gripper.number_or("tcp_from_tool0_m", GripperConfig.tcp_from_tool0_m),
            force_range_n=_force_range(path, gripper.data.get("force_range_n")),
        ),
        camera=CameraConfig(
            image_topic=camera.text("image_topic"),
            detections_topic=camera.text("detections_topic"),
            depth_topic=camera.text_or("depth_topic", ""),
            depth_info_topic=camera.text_or("depth_info_topic", ""),
            optical_frame=camera.text_or("optical_frame", "wrist_camera_optical_frame"),
            info_topic=camera.text_or("info_topic", CameraConfig.info_topic),
        ),
        sim=dict(data.get("sim") or {}),
        surfaces=surfaces,
    )


def _force_range(path: Path, value: Any) -> tuple[float, float] | None:
    if value is None or value == []:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(_finite(v) for v in value)):
        raise CowpError(f"{path_key(path, 'gripper', 'force_range_n')} must be [low, high] (N)")
    low, high = float(value[0]), float(value[1])
    if not 0 <= low < high:
        raise CowpError(f"{path_key(path, 'gripper', 'force_range_n')} must have 0 <= low < high")
    return low, high


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _surfaces(path: Path, data: Any) -> SurfaceConfig:
    """robot.yaml's optional `surfaces` section (files written before it existed omit it)."""
    if data is None:
        return SurfaceConfig()
    reader = _Reader(path, "surfaces", data)
    defaults = SurfaceConfig()

    def spots_of(
        key: str, default: tuple[tuple[float, float], ...]
    ) -> tuple[tuple[float, float], ...]:
        spots = data.get(key) if isinstance(data, dict) else None
        if spots is None and key != "spots":
            return default
        if not (
            isinstance(spots, list)
            and spots
            and all(
                isinstance(s, list) and len(s) == 2 and all(_finite(v) for v in s) for s in spots
            )
        ):
            raise CowpError(f"{path_key(path, 'surfaces', key)} must list [x, y] pairs (m)")
        return tuple((float(x), float(y)) for x, y in spots)

    floor = data.get("floor_locations") if isinstance(data, dict) else None
    if floor is not None and not (
        isinstance(floor, list) and all(isinstance(name, str) and name for name in floor)
    ):
        raise CowpError(f"{path_key(path, 'surfaces', 'floor_locations')} must list location names")
    return SurfaceConfig(
        height=reader.number("height"),
        spots=spots_of("spots", defaults.spots),
        floor_locations=frozenset(floor) if floor is not None else defaults.floor_locations,
        floor_spots=spots_of("floor_spots", defaults.floor_spots),
        front_m=reader.number_or("front_m", defaults.front_m),
        depth_m=reader.number_or("depth_m", defaults.depth_m),
        width_m=reader.number_or("width_m", defaults.width_m),
    )
