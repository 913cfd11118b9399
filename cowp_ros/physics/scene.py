"""The MuJoCo model of the robot and its kitchen, written as MJCF from published figures.

The robot follows config/gazebo/cowp_robot.urdf.xacro's frames (base_link on a 0.1 m
wheel axle, the UR5e on a 0.7 m pedestal 0.1 m ahead of the base's centre, the Hand-E on
tool0, the wrist camera beside the hand) with UR's DH kinematics, masses and limits
(cowp_ros/skills/kinematics.py), primitive collision shapes, and the same joint names
(`ur_` prefix, the Hand-E's finger joints). The base moves on two planar slides and a
yaw hinge driven by velocity, as a holonomic base takes /cmd_vel.

The kitchen is built from robot.yaml's named locations: a work surface in front of each
base pose where objects are kept or put, and each scenario object on the surface of its
location, at the next free spot along it. Objects are free bodies held only by contact
and friction: nothing is welded to the hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from cowp_ros.skills import kinematics
from cowp_ros.skills.config import SurfaceConfig
from cowp_ros.skills.interfaces import Pose2D
from cowp_ros.skills.object_shapes import (
    FRONT_BLOCK,
    HANDLE_BAR,
    OPENABLE,
    Form,
    Shape,
    shape_of,
)

# The robot's dimensions (config/gazebo/cowp_robot.urdf.xacro).
WHEEL_RADIUS = 0.1
BASE_SIZE = (0.6, 0.45, 0.3)
ARM_MOUNT = (0.1, 0.0, 0.7)  # ur_base_link in base_link
HAND_OFFSET = 0.01  # robotiq_hande_base_link on tool0
FINGER_ORIGIN = 0.1  # finger joints on the hand
FINGER_SIZE = (0.02, 0.01, 0.045)
FINGER_STROKE = 0.025
# The grasp point between the pads, from tool0 along its z.
TCP_FROM_TOOL0 = HAND_OFFSET + FINGER_ORIGIN + FINGER_SIZE[2] / 2

# Work surfaces: their height, depth, width, how far ahead of a location's base pose
# their front edge is, and their object spots are robot.yaml's `surfaces`.

ARM_PREFIX = "ur_"
# Joint position gains (N m/rad) and damping (N m s/rad): the shoulder and elbow, the
# wrists. The controller feeds the trajectory's velocity forward (world.py), so the
# damping does not make the arm lag its trajectory.
ARM_GAINS = ((10000.0, 350.0), (1000.0, 30.0))
# Room below closed for a closing finger's servo aimed past its goal (the world's grip).
FINGER_SQUEEZE_ROOM = 0.02
FINGER_JOINTS = ("robotiq_hande_left_finger_joint", "robotiq_hande_right_finger_joint")
BASE_JOINTS = ("base_x", "base_y", "base_yaw")


@dataclass(frozen=True)
class PlacedObject:
    """A scenario object in the world: its name, kind, shape and starting pose."""

    name: str
    kind: str
    shape: Shape
    location: str
    x: float
    y: float
    z: float
    yaw: float
    friction: float = 1.0


@dataclass(frozen=True)
class Surface:
    """A work surface (counter, table, shelf) in front of a named location."""

    location: str
    x: float
    y: float
    yaw: float
    height: float
    depth: float = 0.5
    width: float = 1.0


@dataclass
class Layout:
    """Everything placed in the kitchen: surfaces and objects."""

    surfaces: dict[str, Surface] = field(default_factory=dict)
    objects: list[PlacedObject] = field(default_factory=list)
    fixtures: list[tuple[str, float, float, float]] = field(default_factory=list)
    fronts: list[SlidingFront] = field(default_factory=list)


@dataclass(frozen=True)
class SlidingFront:
    """An openable fixture's sliding front (a cupboard's, a drawer's): a handle on the
    first spot, where the calibrated grasp pose reaches, that slides toward the robot."""

    name: str
    x: float
    y: float
    z: float
    yaw: float


def spot_position(config: SurfaceConfig, index: int, pose: Pose2D) -> tuple[float, float]:
    """Map position of the `index`th spot of the surface in front of base pose `pose`."""
    dx, dy = config.spots[index % len(config.spots)]
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    return pose.x + c * dx - s * dy, pose.y + s * dx + c * dy


# How far a sliding front opens (its block and handle: object_shapes.FRONT_HANDLE).
FRONT_TRAVEL = 0.2


def surface_for(location: str, pose: Pose2D, config: SurfaceConfig) -> Surface:
    ahead = config.front_m + config.depth_m / 2
    return Surface(
        location,
        pose.x + math.cos(pose.yaw) * ahead,
        pose.y + math.sin(pose.yaw) * ahead,
        pose.yaw,
        config.height,
        config.depth_m,
        config.width_m,
    )


def layout_for(
    locations: dict[str, Pose2D],
    objects: list[tuple[str, str, str, dict[str, object]]],
    surfaces: SurfaceConfig | None = None,
) -> Layout:
    """The kitchen for `objects` (name, kind, location, attributes): a surface at every
    location that is not an open one, each graspable object on the next free spot of its
    location's surface, facing the robot. Fixtures (a faucet) are the non-graspable
    objects at a location; they stand at the back of the surface."""
    config = surfaces or SurfaceConfig()
    layout = Layout()
    for name, where in locations.items():
        if not config.on_floor(name):
            layout.surfaces[name] = surface_for(name, where, config)
    used: dict[str, int] = {}
    for name, kind, location, _ in objects:
        at = locations.get(location)
        if at is not None and kind in OPENABLE and location in layout.surfaces:
            x, y = spot_position(config, 0, at)
            layout.fronts.append(SlidingFront(name, x, y, config.height, at.yaw))
            used[location] = max(used.get(location, 0), 1)  # objects start beside it
    for name, kind, location, attributes in objects:
        pose = locations.get(location)
        if pose is None or location not in layout.surfaces:
            continue
        if attributes.get("missing"):
            continue
        if not attributes.get("graspable", True) or kind in OPENABLE:
            if kind in ("sink", "faucet"):
                back = config.front_m + config.depth_m - 0.08
                layout.fixtures.append(
                    (
                        name,
                        pose.x + math.cos(pose.yaw) * back,
                        pose.y + math.sin(pose.yaw) * back,
                        config.height,
                    )
                )
            continue
        index = used.get(location, 0)
        used[location] = index + 1
        shape = shape_of(kind)
        gx, gy, _ = shape.grasp_point()
        x, y = spot_position(config, index, pose)
        # The grasp point is on the spot; turn the object so a dish's rim faces the robot.
        # `offset: [dx, dy]` (m, ahead and left of the robot) moves it off its spot.
        dx, dy = _offset(attributes.get("offset"))
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        x, y = x - (c * gx - s * gy) + c * dx - s * dy, y - (s * gx + c * gy) + s * dx + c * dy
        friction = float(attributes.get("friction", 1.0))  # type: ignore[arg-type]
        layout.objects.append(
            PlacedObject(name, kind, shape, location, x, y, config.height, pose.yaw, friction)
        )
    return layout


def _offset(value: object) -> tuple[float, float]:
    if value is None:
        return 0.0, 0.0
    if isinstance(value, list) and len(value) == 2:
        return float(value[0]), float(value[1])
    raise ValueError(f"an object's offset must be [dx, dy] in metres, not {value!r}")


def _vec(*values: float) -> str:
    return " ".join(f"{v:.6g}" for v in values)


def _quat_z(yaw: float) -> str:
    return _vec(math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


def _quat_x(angle: float) -> str:
    return _vec(math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0)


def _arm_xml() -> str:
    """The UR5e chain from DH parameters: body k is DH frame k-1 turned by joint k."""
    d, a, alpha = kinematics.D, kinematics.A, kinematics.ALPHA
    names = [ARM_PREFIX + j for j in kinematics.JOINTS]
    links = ["shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link",
             "wrist_2_link", "wrist_3_link"]  # fmt: skip
    # Collision shapes in each body's frame (capsules along the links, offset as the
    # real links are from the DH lines).
    shapes = [
        '<geom class="arm" type="cylinder" size="0.06 0.075" pos="0 0 0.08"/>',
        '<geom class="arm" type="capsule" size="0.054" fromto="0 0 0.138 -0.425 0 0.138"/>',
        '<geom class="arm" type="capsule" size="0.04" fromto="0 0 0.007 -0.392 0 0.007"/>',
        '<geom class="arm" type="cylinder" size="0.045 0.06" pos="0 0 0.07"/>',
        '<geom class="arm" type="cylinder" size="0.045 0.05" pos="0 0 0.05"/>',
        '<geom class="arm" type="cylinder" size="0.04 0.02" pos="0 0 0.08"/>',
    ]
    centres = ["0 0 0.08", "-0.21 0 0.138", "-0.2 0 0.007", "0 0 0.07", "0 0 0.05", "0 0 0.08"]
    opening = []
    for i in range(6):
        low, high = kinematics.POSITION_LIMITS[i]
        if i == 0:
            pos, quat = "0 0 0", "1 0 0 0"
        else:
            pos = _vec(a[i - 1], 0.0, d[i - 1])
            quat = _quat_x(alpha[i - 1])
        mass = kinematics.MASSES[i]
        inertia = _vec(*(mass * 0.004,) * 3)
        opening.append(
            f'<body name="{ARM_PREFIX}{links[i]}" pos="{pos}" quat="{quat}" gravcomp="1">'
            f'<joint name="{names[i]}" type="hinge" axis="0 0 1" range="{low:.6f} {high:.6f}"'
            f' damping="2" armature="0.1"/>'
            f'<inertial pos="{centres[i]}" mass="{mass}" diaginertia="{inertia}"/>'
            f"{shapes[i]}"
        )
    tool0 = _vec(0.0, 0.0, d[5])
    hand = _hand_xml()
    inner = (
        f'<site name="{ARM_PREFIX}tool0" pos="{tool0}"/>'
        f'<body name="hand" pos="{tool0}">{hand}</body>'
    )
    return "".join(opening) + inner + "</body>" * 6


def _hand_xml() -> str:
    """The Hand-E on tool0: its body, two fingers on slides along y, the wrist camera."""
    fx, fy, fz = (s / 2 for s in FINGER_SIZE)
    fingers = []
    for side, direction in (("left", 1), ("right", -1)):
        fingers.append(
            f'<body name="robotiq_hande_{side}_finger" pos="0 0 {FINGER_ORIGIN}" gravcomp="1">'
            f'<joint name="robotiq_hande_{side}_finger_joint" type="slide"'
            f' axis="0 {direction} 0" range="0 {FINGER_STROKE}" damping="5" armature="0.05"/>'
            f'<inertial pos="0 {direction * fy:.4f} {fz:.4f}" mass="0.05"'
            f' diaginertia="1e-5 1e-5 1e-5"/>'
            f'<geom name="{side}_pad" class="pad" type="box" size="{fx} {fy} {fz}"'
            f' pos="0 {direction * fy:.4f} {fz:.4f}"/>'
            f"</body>"
        )
    return (
        f'<body name="robotiq_hande_base_link" pos="0 0 {HAND_OFFSET}" gravcomp="1">'
        '<inertial pos="0 0 0.05" mass="0.86" diaginertia="0.0011 0.0011 0.0008"/>'
        '<geom name="hand_body" class="arm" type="box" size="0.0375 0.0375 0.05" pos="0 0 0.05"/>'
        f'<site name="tcp" pos="0 0 {FINGER_ORIGIN + FINGER_SIZE[2] / 2}" size="0.004"/>'
        '<body name="wrist_camera_link" pos="0.055 0 0.04">'
        '<geom class="visual" type="box" size="0.0125 0.04 0.01"/>'
        '<camera name="wrist_camera" pos="0 0 0" xyaxes="0 1 0 1 0 0" fovy="53"/>'
        "</body>" + "".join(fingers) + "</body>"
    )


def _robot_xml(start: Pose2D) -> str:
    bx, by, bz = (s / 2 for s in BASE_SIZE)
    mx, my, mz = ARM_MOUNT
    return (
        f'<body name="base_footprint" pos="{_vec(start.x, start.y, 0.0)}">'
        '<joint name="base_x" type="slide" axis="1 0 0" damping="0"/>'
        '<joint name="base_y" type="slide" axis="0 1 0" damping="0"/>'
        f'<joint name="base_yaw" type="hinge" axis="0 0 1" ref="0" />'
        f'<body name="base_link" pos="0 0 {WHEEL_RADIUS}" euler="0 0 {start.yaw:.6f}">'
        '<inertial pos="0 0 0.15" mass="45" diaginertia="1.5 2.0 2.5"/>'
        f'<geom name="base_box" class="robot" type="box" size="{bx} {by} {bz}" pos="0 0 {bz}"/>'
        f'<geom name="arm_mount" class="robot" type="cylinder" size="0.08 {mz / 2 - 0.15:.3f}"'
        f' pos="{mx} {my} {(mz + 2 * bz) / 2:.3f}"/>'
        f'<body name="{ARM_PREFIX}base_link" pos="{_vec(mx, my, mz)}">'
        f'<body name="{ARM_PREFIX}base_link_inertia" quat="0 0 0 1">'
        + _arm_xml()
        + "</body></body></body></body>"
    )


def _object_xml(obj: PlacedObject) -> str:
    s = obj.shape
    friction = _vec(obj.friction, 0.01, 0.0001)
    common = f'class="object" friction="{friction}" priority="1"'
    half = s.height / 2

    def geom(kind: str, size: str, pos: str, extra: str = "") -> str:
        return f'<geom type="{kind}" size="{size}" pos="{pos}" {extra}{common}/>'

    geoms = []
    if s.form is Form.CYLINDER:
        geoms.append(geom("cylinder", _vec(s.radius, half), _vec(0, 0, half)))
    elif s.form is Form.BLOCK:
        geoms.append(geom("box", _vec(s.radius, s.radius, half), _vec(0, 0, half)))
    elif s.form is Form.BAR:
        geoms.append(geom("box", _vec(s.length / 2, s.radius, half), _vec(0, 0, half)))
    else:  # a dish: a floor and a rim of segments
        floor = 0.004
        geoms.append(geom("cylinder", _vec(s.radius, floor / 2), _vec(0, 0, floor / 2)))
        segments = 16
        r = s.radius - s.wall / 2
        half_arc = math.pi * r / segments * 1.05
        for k in range(segments):
            angle = 2 * math.pi * k / segments
            geoms.append(
                geom(
                    "box",
                    _vec(s.wall / 2, half_arc, half),
                    _vec(r * math.cos(angle), r * math.sin(angle), half),
                    f'euler="0 0 {angle:.5f}" ',
                )
            )
    inertia = _vec(*(s.mass * 0.0006,) * 3)
    return (
        f'<body name={quoteattr(obj.name)} pos="{_vec(obj.x, obj.y, obj.z + 0.001)}"'
        f' euler="0 0 {obj.yaw:.6f}">'
        f"<freejoint name={quoteattr(obj.name + '_free')}/>"
        f'<inertial pos="0 0 {s.height / 3:.4f}" mass="{s.mass}" diaginertia="{inertia}"/>'
        + "".join(geoms)
        + "</body>"
    )


def _surface_xml(surface: Surface) -> str:
    h = surface.height
    return (
        f'<body name="surface_{surface.location}" pos="{_vec(surface.x, surface.y, h / 2)}"'
        f' euler="0 0 {surface.yaw:.6f}">'
        f'<geom name="surface_{surface.location}" class="furniture" type="box"'
        f' size="{surface.depth / 2} {surface.width / 2} {h / 2}"/>'
        "</body>"
    )


def _front_xml(front: SlidingFront) -> str:
    depth, width, height = FRONT_BLOCK
    bar_x, bar_y, bar_z = HANDLE_BAR
    # held by its slide (gravity compensated), 2 mm above the surface it slides over
    return (
        f'<body name={quoteattr(front.name)} pos="{_vec(front.x, front.y, front.z + 0.002)}"'
        f' euler="0 0 {front.yaw:.6f}" gravcomp="1">'
        f'<joint name={quoteattr(front.name + "_slide")} type="slide" axis="-1 0 0"'
        f' range="0 {FRONT_TRAVEL}" damping="30" frictionloss="3"/>'
        f'<inertial pos="0 0 {height / 2}" mass="1.0" diaginertia="0.01 0.01 0.01"/>'
        f'<geom class="object" type="box" size="{_vec(depth / 2, width / 2, height / 2)}"'
        f' pos="{_vec(0, 0, height / 2)}" rgba="0.6 0.5 0.4 1"/>'
        f'<geom class="object" type="box" size="{_vec(bar_x / 2, bar_y / 2, bar_z / 2)}"'
        f' pos="{_vec(0, 0, height + bar_z / 2)}" rgba="0.3 0.3 0.3 1"/>'
        "</body>"
    )


def _fixture_xml(name: str, x: float, y: float, z: float) -> str:
    return (
        f'<body name={quoteattr(name)} pos="{_vec(x, y, z)}">'
        '<geom class="furniture" type="cylinder" size="0.02 0.15" pos="0 0 0.15"/>'
        "</body>"
    )


def model_xml(
    layout: Layout, start: Pose2D, *, timestep: float = 0.002, gripper_effort_n: float = 60.0
) -> str:
    """The whole MJCF document: the robot at `start`, the kitchen of `layout`."""
    arm_actuators = []
    for i, joint in enumerate(kinematics.JOINTS):
        effort = kinematics.EFFORT_LIMITS[i]
        kp, kv = ARM_GAINS[0] if i < 3 else ARM_GAINS[1]
        arm_actuators.append(
            f'<position name="{ARM_PREFIX}{joint}" joint="{ARM_PREFIX}{joint}" kp="{kp}" kv="{kv}"'
            f' forcerange="{-effort} {effort}" ctrlrange="-6.2832 6.2832"/>'
        )
    finger_actuators = [
        f'<position name="{joint}" joint="{joint}" kp="20000" kv="100"'
        f' forcerange="{-gripper_effort_n} {gripper_effort_n}"'
        f' ctrlrange="{-FINGER_SQUEEZE_ROOM} {FINGER_STROKE}"/>'
        for joint in FINGER_JOINTS
    ]
    base_actuators = [
        # stiff velocity servos: the wheels' grip holds the base still when the arm pushes
        '<velocity name="base_x" joint="base_x" kv="20000" forcerange="-1000 1000"/>',
        '<velocity name="base_y" joint="base_y" kv="20000" forcerange="-1000 1000"/>',
        '<velocity name="base_yaw" joint="base_yaw" kv="5000" forcerange="-500 500"/>',
    ]
    body = (
        _robot_xml(start)
        + "".join(_surface_xml(s) for s in layout.surfaces.values())
        + "".join(_fixture_xml(*f) for f in layout.fixtures)
        + "".join(_front_xml(f) for f in layout.fronts)
        + "".join(_object_xml(o) for o in layout.objects)
    )
    return f"""<mujoco model="cowp_kitchen">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{timestep}" integrator="implicitfast" cone="elliptic" impratio="10"/>
  <visual><global offwidth="640" offheight="480"/></visual>
  <default>
    <default class="robot"><geom contype="2" conaffinity="20" rgba="0.3 0.3 0.35 1"/></default>
    <default class="arm"><geom contype="16" conaffinity="4" rgba="0.6 0.65 0.7 1"/></default>
    <default class="pad"><geom contype="8" conaffinity="4" friction="1.0 0.02 0.0001"
      condim="4" solref="0.004 1" solimp="0.95 0.99 0.001" rgba="0.2 0.2 0.2 1"/></default>
    <default class="furniture"><geom contype="4" conaffinity="14" rgba="0.75 0.7 0.6 1"/></default>
    <default class="object"><geom contype="4" conaffinity="15" condim="4"
      solref="0.004 1" solimp="0.95 0.99 0.001" rgba="0.9 0.9 0.95 1"/></default>
    <default class="visual"><geom contype="0" conaffinity="0" rgba="0.1 0.1 0.1 1"/></default>
  </default>
  <worldbody>
    <light pos="2 0 4" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="20 20 0.1" contype="4" conaffinity="4"
      rgba="0.8 0.8 0.8 1"/>
    {body}
  </worldbody>
  <equality>
    <!-- the Hand-E's fingers are geared together: they open and close as one -->
    <joint joint1="{FINGER_JOINTS[0]}" joint2="{FINGER_JOINTS[1]}" polycoef="0 1 0 0 0"/>
  </equality>
  <actuator>
    {"".join(base_actuators)}
    {"".join(arm_actuators)}
    {"".join(finger_actuators)}
  </actuator>
</mujoco>
"""
