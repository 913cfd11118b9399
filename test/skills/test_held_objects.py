"""What the hand holds, read from the announced plan steps with the shipped skills."""

from __future__ import annotations

from cowp_ros.resources import share_path
from cowp_ros.skills.held_objects import HeldObjects
from cowp_ros.skills.roles import registered_skill_map
from cowp_ros.skills.skill_map import load_skill_map


def test_serve_water_holds_the_cup_from_its_grasp_to_its_delivery() -> None:
    skill_map, _ = registered_skill_map(load_skill_map(share_path("config", "skills.yaml")))
    hand = HeldObjects(skill_map)
    plan = [
        ("find_cup", ["cup_1"], None),
        ("grasp_cup", ["cup_1"], "cup_1"),
        ("walk_to", ["faucet_1"], "cup_1"),
        ("fill_water", ["cup_1", "faucet_1"], "cup_1"),
        ("deliver_water", ["cup_1", "table_1"], "cup_1"),  # held until it is put down
        ("walk_to", ["counter_1"], None),
        ("no_skill_runs_this", ["mug_1"], None),
    ]
    assert [hand.step(action, arguments) for action, arguments, _ in plan] == [
        held for _, _, held in plan
    ]
