"""config/skills.yaml: every PDDL action we plan with maps to a skill, variants included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from cowp_ros.errors import CowpError
from cowp_ros.skills.config import RobotConfig, load_robot_config
from cowp_ros.skills.skill_map import SkillMap, load_skill_map
from cowp_ros.skills.world import Whereabouts

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT.parent / "shared" / "data" / "cowp"

# The plan-step action names of the COWP dataset's tasks 1, 4, 6, 9, 10 and 11.
DATASET_ACTIONS = [
    "grasp_vacuum",
    "plug_vacuum",
    "turnon_vacuum",
    "clean_area",
    "find_table",
    "find_faucet",
    "turnon_faucet",
    "find_cup",
    "hold_cup",
    "fill_cup",
    "place_cup",
    "find_cupboard",
    "open_cupboard",
    "find_plate",
    "takeout_plate",
    "place_plate",
    "find_fork",
    "takeout_fork",
    "place_fork",
    "walk",
    "walk_table",
    "grasp_plate",
    "walk_sink",
    "find_coke",
    "grasp_coke",
    "find_glass",
    "move_glass",
    "pour_coke",
    "place_glass",
    "find_chair",
    "pull_chair",
    "find_burger",
]

ACTION = re.compile(r"\(:action\s+([^\s()]+)\s+:parameters\s*\(([^)]*)\)", re.IGNORECASE)


def domain_actions() -> list[tuple[Path, str, int]]:
    """(domain file, action name, number of parameters) for every pddl/**/*domain*.pddl."""
    found = []
    for path in sorted((ROOT / "pddl").glob("**/*domain*.pddl")):
        text = re.sub(r";[^\n]*", "", path.read_text(encoding="utf-8"))
        for name, params in ACTION.findall(text):
            count = len(re.findall(r"\?[^\s)]+", params))
            found.append((path, name.lower(), count))
    return found


def test_the_domains_are_there_to_check() -> None:
    assert domain_actions(), "no pddl/**/*domain*.pddl found"


@pytest.mark.parametrize(
    ("path", "action", "arity"),
    domain_actions(),
    ids=[f"{p.parent.name}:{a}" for p, a, _ in domain_actions()],
)
def test_every_domain_action_maps_and_binds(
    skill_map: SkillMap, path: Path, action: str, arity: int
) -> None:
    call = skill_map.resolve(action, [f"thing_{i}" for i in range(arity)])
    assert call.matched_by == "action", f"{action} of {path} is only matched by {call.matched_by}"
    assert set(call.roles) >= call.skill.roles


@pytest.mark.parametrize("action", DATASET_ACTIONS)
def test_every_dataset_action_has_its_own_entry(skill_map: SkillMap, action: str) -> None:
    assert action in skill_map.actions


def test_dataset_readme_lists_the_same_actions() -> None:
    situations = DATASET / "situations.json"
    if not situations.exists():
        pytest.skip("COWP dataset not present")
    named = {a["action"] for s in json.loads(situations.read_text()) for a in s["actions"]}
    assert named <= set(DATASET_ACTIONS), named - set(DATASET_ACTIONS)


def test_substitute_object_uses_the_same_skill(skill_map: SkillMap) -> None:
    call = skill_map.resolve("fill_cup", ["bowl_1", "faucet_1"])
    assert (call.skill.name, call.roles, call.matched_by) == (
        "fill",
        {"source": "faucet_1"},
        "action",
    )
    place = skill_map.resolve("place_cup", ["bowl_1", "table_1"])
    assert place.roles == {"object": "bowl_1", "location": "table_1"}


def test_generated_variant_name_maps_to_the_longest_known_action(skill_map: SkillMap) -> None:
    call = skill_map.resolve("fill_cup_bowl", ["bowl_1", "faucet_1"])
    assert call.skill.name == "fill" and call.matched_by == "variant of fill_cup"
    walk = skill_map.resolve("walk_table_desk", ["desk_1", "room_1"])
    assert walk.matched_by == "variant of walk_table"


def test_unknown_verbs_fall_back_to_patterns(skill_map: SkillMap) -> None:
    assert skill_map.resolve("find_mug", ["mug_1"]).skill.name == "find"
    takeout = skill_map.resolve("takeout_spoon", ["spoon_1", "cupboard_1"])
    assert takeout.skill.name == "pick_from" and takeout.roles["location"] == "cupboard_1"
    assert skill_map.resolve("switch_kettle", ["kettle_1"]).skill.name == "press"


def test_unmapped_action_names_itself_and_the_file(skill_map: SkillMap) -> None:
    with pytest.raises(CowpError) as err:
        skill_map.resolve("juggle_balls", ["ball_1"])
    assert "juggle_balls" in str(err.value) and "skills.yaml" in str(err.value)


def test_too_few_arguments_fail_clearly(skill_map: SkillMap) -> None:
    with pytest.raises(CowpError, match=r"place_cup\(cup_1\).*argument 1"):
        skill_map.resolve("place_cup", ["cup_1"])


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "skills.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


NAV = {"navigate": {"steps": [{"navigate": "location"}]}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"skills": NAV, "actions": {"walk": {"skill": "fly"}}}, "unknown skill 'fly'"),
        ({"skills": NAV, "actions": {"walk": {"skill": "navigate"}}}, "role(s) location"),
        ({"skills": {"x": {"steps": [{"teleport": "a"}]}}}, "unknown kind 'teleport'"),
        ({"skills": {"x": {"steps": [{"arm": "dance"}]}}}, "arm pose 'dance'"),
        ({"skills": {"x": {"steps": [{"gripper": "wiggle"}]}}}, "gripper takes"),
        ({"skills": NAV, "patterns": [{"match": "(", "skill": "navigate"}]}, "regular expr"),
    ],
)
def test_bad_skill_files_name_the_problem(
    tmp_path: Path, robot: RobotConfig, data: dict, message: str
) -> None:
    with pytest.raises(CowpError, match=re.escape(message)):
        load_skill_map(write(tmp_path, data), arm_poses=set(robot.arm.poses))


def test_every_object_class_of_the_problems_has_a_location(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    """Every object COWP may substitute (the problems' pools) can be driven to."""
    world = Whereabouts(
        set(robot.base.locations),
        location_aliases=skill_map.location_aliases,
        object_locations=skill_map.object_locations,
    )
    objects: set[str] = set()
    for path in (ROOT / "pddl").glob("**/*problem*.pddl"):
        text = re.sub(r";[^\n]*", "", path.read_text(encoding="utf-8"))
        block = re.search(r"\(:objects(.*?)\)", text, re.DOTALL)
        if block:
            objects |= set(re.findall(r"[a-z][a-z0-9_]*", re.sub(r"- \w+", "", block[1])))
    assert objects, "no objects found in pddl/**/*problem*.pddl"
    for name in sorted(objects):
        assert world.location_of(name) in robot.base.locations


def test_world_tracks_what_the_robot_moves(robot: RobotConfig, skill_map: SkillMap) -> None:
    world = Whereabouts(set(robot.base.locations), object_locations=skill_map.object_locations)
    assert world.location_of("cup_1") == "counter"
    world.base_location = "counter"
    world.picked("cup_1")
    world.base_location = "table"
    assert world.location_of("cup_1") == "table"  # in the hand, so where the base is
    world.released("cup_1")
    world.base_location = "sink"
    assert world.location_of("cup_1") == "table" and world.holding is None


def test_unknown_object_location_names_the_files(robot: RobotConfig) -> None:
    world = Whereabouts(set(robot.base.locations), sources=(Path("config/skills.yaml"),))
    with pytest.raises(CowpError) as err:
        world.location_of("unicorn_3")
    assert "unicorn" in str(err.value) and "config/skills.yaml" in str(err.value)


def test_bad_robot_yaml_names_the_key(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "config" / "robot.yaml").read_text())
    data["arm"]["poses"]["home"] = [0.0, 1.0]
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CowpError, match=r"arm\.poses\.home must list 6"):
        load_robot_config(path)
    del data["gripper"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CowpError, match="'gripper' must be a mapping"):
        load_robot_config(path)


def test_bad_floor_locations_name_the_key(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "config" / "robot.yaml").read_text())
    path = tmp_path / "robot.yaml"
    data["surfaces"]["floor_spots"] = [[0.6]]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CowpError, match=r"surfaces\.floor_spots must list \[x, y\] pairs"):
        load_robot_config(path)
    data["surfaces"]["floor_spots"] = [[0.5, 0.0]]
    data["surfaces"]["floor_locations"] = "dining_area"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CowpError, match=r"surfaces\.floor_locations must list location names"):
        load_robot_config(path)
    data["surfaces"]["floor_locations"] = ["hall"]
    path.write_text(yaml.safe_dump(data))
    surfaces = load_robot_config(path).surfaces
    assert surfaces.put_down_spot("hall", 3) == ((0.5, 0.0), 0.0)
    assert surfaces.put_down_spot("table", 0) == (surfaces.spots[0], surfaces.height)
