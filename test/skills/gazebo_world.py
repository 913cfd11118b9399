"""config/gazebo/kitchen.sdf as data: its boxes, and the occupancy map drawn from them.

The Nav2 option of the Gazebo profile needs a map of the kitchen. It is drawn here from
the world's own collision boxes (every static box that reaches below MAX_HEIGHT_M), so
the map cannot drift from the world: a test redraws it and compares it with the
checked-in config/gazebo/kitchen_map.pgm. After changing the world, redraw it:

    .venv/bin/python test/skills/gazebo_world.py
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORLD = ROOT / "config" / "gazebo" / "kitchen.sdf"
MAP_PGM = ROOT / "config" / "gazebo" / "kitchen_map.pgm"
MAP_YAML = ROOT / "config" / "gazebo" / "kitchen_map.yaml"

RESOLUTION_M = 0.05
ORIGIN = (-3.0, -4.5)  # map cell (0, 0), bottom left
SIZE_M = (10.0, 8.0)
MAX_HEIGHT_M = 1.0  # obstacles the base or the lidar (0.43 m) can meet
FREE, OCCUPIED = 254, 0


@dataclass(frozen=True)
class Box:
    """A collision box of a static model, in world coordinates."""

    model: str
    x: float
    y: float
    z: float
    yaw: float
    size: tuple[float, float, float]


def _pose(element: ET.Element | None) -> tuple[float, ...]:
    text = element.findtext("pose", "0 0 0 0 0 0") if element is not None else "0 0 0 0 0 0"
    return tuple(float(v) for v in text.split())


def boxes(world: Path = WORLD) -> list[Box]:
    found = []
    root = ET.parse(world).getroot().find("world")
    assert root is not None
    for model in root.findall("model"):
        if model.findtext("static", "false").strip() != "true":
            continue
        mx, my, mz, _, _, myaw = _pose(model)
        for link in model.findall("link"):
            for collision in link.findall("collision"):
                size = collision.findtext("geometry/box/size")
                if size is None:
                    continue
                cx, cy, cz, _, _, cyaw = _pose(collision)
                x = mx + cx * math.cos(myaw) - cy * math.sin(myaw)
                y = my + cx * math.sin(myaw) + cy * math.cos(myaw)
                sx, sy, sz = (float(v) for v in size.split())
                found.append(Box(model.get("name", ""), x, y, mz + cz, myaw + cyaw, (sx, sy, sz)))
    return found


def occupancy(world: Path = WORLD) -> tuple[int, int, bytes]:
    """(width, height, rows top-down) of the map, FREE or OCCUPIED per cell."""
    width = round(SIZE_M[0] / RESOLUTION_M)
    height = round(SIZE_M[1] / RESOLUTION_M)
    cells = bytearray([FREE]) * (width * height)
    for box in boxes(world):
        if box.z - box.size[2] / 2 > MAX_HEIGHT_M:
            continue
        c, s = math.cos(box.yaw), math.sin(box.yaw)
        for row in range(height):
            y = ORIGIN[1] + (row + 0.5) * RESOLUTION_M
            for col in range(width):
                x = ORIGIN[0] + (col + 0.5) * RESOLUTION_M
                dx, dy = x - box.x, y - box.y
                u, v = dx * c + dy * s, -dx * s + dy * c
                if abs(u) <= box.size[0] / 2 and abs(v) <= box.size[1] / 2:
                    cells[(height - 1 - row) * width + col] = OCCUPIED  # PGM: top row first
    return width, height, bytes(cells)


def pgm(world: Path = WORLD) -> bytes:
    width, height, cells = occupancy(world)
    return f"P5\n{width} {height}\n255\n".encode() + cells


def map_yaml() -> str:
    return (
        "# Occupancy map of config/gazebo/kitchen.sdf for Nav2's map_server (the\n"
        "# gazebo_nav2 profile), drawn from the world's collision boxes by\n"
        "# test/skills/gazebo_world.py; a test keeps the two in step.\n"
        f"image: {MAP_PGM.name}\n"
        "mode: trinary\n"
        f"resolution: {RESOLUTION_M}\n"
        f"origin: [{ORIGIN[0]}, {ORIGIN[1]}, 0.0]\n"
        "negate: 0\n"
        "occupied_thresh: 0.65\n"
        "free_thresh: 0.25\n"
    )


if __name__ == "__main__":
    MAP_PGM.write_bytes(pgm())
    MAP_YAML.write_text(map_yaml())
    print(f"wrote {MAP_PGM} and {MAP_YAML}")
