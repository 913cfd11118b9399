"""Scenario files load, and their events fire on the steps they name, once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cowp_ros.errors import CowpError
from cowp_ros.sim.scenario import EventTrigger, available_scenarios, load_scenario


def test_demo_scenario_loads() -> None:
    scenario = load_scenario("serve_water_dirty_cup")
    assert scenario.task == "serve_water"
    assert scenario.objects["cup_1"].attributes["dirty"] is True
    assert scenario.objects["table_1"].attributes["graspable"] is False
    assert scenario.camera_images == ("skimage:coffee",)
    assert "serve_water_dirty_cup" in available_scenarios()


def test_event_fires_on_its_step_and_object_only_once() -> None:
    trigger = EventTrigger(load_scenario("serve_water_dirty_cup").events)
    assert trigger.on_step("find_cup", ["mug_1"]) == []
    assert trigger.on_step("walk_to", ["cup_1"]) == []
    fired = trigger.on_step("find_cup", ["cup_1"])
    assert [e.situation for e in fired] == ["the cup is dirty"]
    assert fired[0].about == "cup_1"
    assert trigger.on_step("find_cup", ["cup_1"]) == []


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(CowpError, match=r"known scenarios: .*serve_water_dirty_cup"):
        load_scenario("no_such_scenario")


def test_malformed_scenario_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("task: serve_water\nevents:\n  - when: {argument: cup_1}\n")
    with pytest.raises(CowpError, match=r"bad\.yaml is malformed"):
        load_scenario(str(path))


def test_a_camera_scenario_shows_each_step_its_pictures() -> None:
    """serve_water_camera: the cup with something in it while the robot finds and grasps
    it, the plain coffee cup otherwise; its situation is the detector's to say."""
    from cowp_ros.sim.step_camera import StepCamera

    scenario = load_scenario("serve_water_camera")
    (event,) = scenario.events
    assert event.seen_by == "situation_detector" and event.blocks is True

    def load(reference: str) -> tuple[np.ndarray, str]:
        return np.full((2, 2, 3), len(reference), np.uint8), reference

    camera = StepCamera(scenario, load)
    plain, composite = len("skimage:coffee"), len("composite:person_in_coffee_cup")
    assert camera.frame()[0, 0, 0] == plain
    camera.on_step("find_cup", ["cup_1"])
    assert [camera.frame()[0, 0, 0] for _ in range(2)] == [composite, composite]
    camera.on_step("find_cup", ["mug_1"])  # another cup: the default view
    assert camera.frame()[0, 0, 0] == plain
    camera.on_step("grasp_cup", ["cup_1"])
    assert camera.frame()[0, 0, 0] == composite
    camera.on_step("walk_to", ["faucet_1"])
    assert camera.frame()[0, 0, 0] == plain


def test_the_composite_picture_is_the_coffee_cup_with_a_person_in_it() -> None:
    pytest.importorskip("ultralytics", reason="the perception part of setup was skipped")
    from skimage import data

    from cowp_ros.sim.camera_images import load_camera_image

    image, origin = load_camera_image("composite:person_in_coffee_cup")
    coffee = data.coffee()
    assert origin == "composite:person_in_coffee_cup" and image.shape == coffee.shape
    changed = np.argwhere((image != coffee).any(axis=2))
    (top, left), (bottom, right) = changed.min(axis=0), changed.max(axis=0)
    assert (left, top) == (150, 174) and bottom == 174 + 130 - 1  # inside the cup's box
    assert right < 428


def test_an_unknown_composite_names_the_known_ones() -> None:
    from cowp_ros.sim.composites import composite_rgb

    with pytest.raises(CowpError, match="composites: person_in_coffee_cup"):
        composite_rgb("fork_in_cup")
