"""Scenario files load, and their events fire on the steps they name, once."""

from __future__ import annotations

from pathlib import Path

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
