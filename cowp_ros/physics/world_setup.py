"""A physics world for a scenario: the kitchen laid out, the model built, the planner's map.

Objects stand where the scenario says (its `location:`, a named location of
robot.yaml); each object's shape comes from its class (cup_1 -> cup,
cowp_ros/skills/object_shapes.py). A scenario object may set `friction:` among its
attributes (a slippery glass), and `missing: true` keeps it out of the world.
"""

from __future__ import annotations

from dataclasses import dataclass

from cowp_ros.physics.navigation import Footprint, GridPlanner
from cowp_ros.physics.scene import (
    Layout,
    layout_for,
    model_xml,
)
from cowp_ros.physics.world import PhysicsWorld
from cowp_ros.sim.scenario import Scenario, load_scenario
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.world import object_class


@dataclass(frozen=True)
class WorldSetup:
    scenario: Scenario
    layout: Layout
    world: PhysicsWorld
    planner: GridPlanner


def kitchen_layout(scenario: Scenario, robot: RobotConfig) -> Layout:
    objects = [
        (o.name, object_class(o.name), o.location, dict(o.attributes))
        for o in scenario.objects.values()
    ]
    return layout_for(dict(robot.base.locations), objects, robot.surfaces)


def floor_planner(layout: Layout, robot: RobotConfig) -> GridPlanner:
    """The navigation grid over the kitchen, two metres beyond its locations."""
    footprints = [
        Footprint(s.x, s.y, s.depth / 2, s.width / 2, s.yaw) for s in layout.surfaces.values()
    ]
    xs = [p.x for p in robot.base.locations.values()] + [s.x for s in layout.surfaces.values()]
    ys = [p.y for p in robot.base.locations.values()] + [s.y for s in layout.surfaces.values()]
    bounds = (min(xs) - 2.0, min(ys) - 2.0, max(xs) + 2.0, max(ys) + 2.0)
    return GridPlanner(footprints, bounds)


def build_world(scenario_name: str, robot: RobotConfig, start_location: str) -> WorldSetup:
    scenario = load_scenario(scenario_name)
    layout = kitchen_layout(scenario, robot)
    start = robot.base.locations[start_location]
    world = PhysicsWorld(
        model_xml(layout, start, gripper_effort_n=robot.gripper.max_effort_n),
        arm=robot.arm.poses[robot.arm.carry_pose or "home"],
        fingers=robot.gripper.open_position_m,
    )
    return WorldSetup(scenario, layout, world, floor_planner(layout, robot))
