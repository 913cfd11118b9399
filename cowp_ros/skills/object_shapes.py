"""The shape of each kind of object the robot handles, and where the Hand-E takes it.

One table serves two readers: the physics world builds its objects from it, and the
skill layer computes a top-down grasp from it (where on the object the fingertips go,
along which direction they close). Sizes respect the Hand-E's 50 mm stroke: a kind
wider than that is taken by a part that fits (a dish by its rim, a tool by its handle).
Object frames have their origin at the bottom centre, z up.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

# The Hand-E's fingertip pads reach this far below the grasp point (half a 45 mm pad).
PAD_HALF_LENGTH_M = 0.0225


class Form(enum.Enum):
    CYLINDER = "cylinder"  # cups, glasses, bottles: taken around the top
    DISH = "dish"  # plates and bowls: a floor and a rim, taken by the rim
    BAR = "bar"  # cutlery, tool handles: a long box lying flat, taken across
    BLOCK = "block"  # anything else graspable: an upright block, taken around the top
    HANDLE = "handle"  # a sliding front's bar handle: taken across its depth, pulled


@dataclass(frozen=True)
class Shape:
    """Dimensions (m) and mass (kg) of one kind; `radius` is half the footprint width."""

    form: Form
    radius: float
    height: float
    mass: float
    length: float = 0.0  # BAR: along the object's x; HANDLE: the bar's width
    wall: float = 0.01  # DISH: rim thickness; HANDLE: the bar's height

    def grasp_point(self) -> tuple[float, float, float]:
        """Where the grasp point (between the fingertip pads) goes, in the object frame."""
        if self.form is Form.DISH:
            return (-(self.radius - self.wall / 2), 0.0, self.height - 0.004)
        if self.form is Form.BAR:
            return (0.0, 0.0, PAD_HALF_LENGTH_M + 0.003)
        if self.form is Form.HANDLE:
            # the pads' lower edges just above the front they stand on, so they close
            # on the bar and never on the front
            return (0.0, 0.0, self.height - self.wall + HANDLE_PAD_CLEARANCE_M + PAD_HALF_LENGTH_M)
        return (0.0, 0.0, self.height - PAD_HALF_LENGTH_M)

    def closing_yaw(self) -> float:
        """The direction the fingers close along, as a yaw in the object frame: across
        a bar's width, radially across a dish's rim, and across a handle's depth (the
        front's x, the direction it slides)."""
        return math.pi / 2 if self.form is Form.BAR else 0.0


CUP = Shape(Form.CYLINDER, 0.02, 0.10, 0.25)
GLASS = Shape(Form.CYLINDER, 0.019, 0.11, 0.22)
BOTTLE = Shape(Form.CYLINDER, 0.02, 0.16, 0.40)
PLATE = Shape(Form.DISH, 0.10, 0.03, 0.35)
BOWL = Shape(Form.DISH, 0.07, 0.05, 0.30)
CUTLERY = Shape(Form.BAR, 0.009, 0.014, 0.06, length=0.18)
TOOL = Shape(Form.BAR, 0.012, 0.025, 0.30, length=0.22)
BLOCK = Shape(Form.BLOCK, 0.016, 0.12, 0.30)
# A sliding front: a block (depth, width, height) with a bar handle on top; the frame's
# origin at the front's bottom centre. The HANDLE shape is the whole front: radius half
# the bar's depth, height the bar's top, length the bar's width, wall the bar's height.
FRONT_BLOCK = (0.04, 0.08, 0.07)
HANDLE_BAR = (0.018, 0.12, 0.014)
HANDLE_PAD_CLEARANCE_M = 0.002
FRONT_HANDLE = Shape(
    Form.HANDLE,
    HANDLE_BAR[0] / 2,
    FRONT_BLOCK[2] + HANDLE_BAR[2],
    1.0,
    length=HANDLE_BAR[1],
    wall=HANDLE_BAR[2],
)
# Fixtures opened by a handle on a sliding front (skills.yaml's open skill).
OPENABLE = frozenset({"cupboard", "drawer", "fridge", "oven", "microwave", "dishwasher"})

SHAPES: dict[str, Shape] = {
    "cup": CUP,
    "mug": CUP,
    "glass": GLASS,
    "bottle": BOTTLE,
    "coke": BOTTLE,
    "juice": BOTTLE,
    "milk": BOTTLE,
    "beer": BOTTLE,
    "jug": BOTTLE,
    "pitcher": BOTTLE,
    "kettle": BOTTLE,
    "plate": PLATE,
    "tray": PLATE,
    "bowl": BOWL,
    "pot": BOWL,
    "pan": BOWL,
    "fork": CUTLERY,
    "knife": CUTLERY,
    "spoon": CUTLERY,
    "chopsticks": CUTLERY,
    "wrench": TOOL,
    "screwdriver": TOOL,
    "broom": TOOL,
    "mop": TOOL,
}


def shape_of(kind: str) -> Shape:
    """The shape of an object class (an instance name's class: cup for cup_1); an
    openable fixture's is its front's handle."""
    if kind in OPENABLE:
        return FRONT_HANDLE
    return SHAPES.get(kind, BLOCK)
