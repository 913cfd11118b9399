"""Scenarios of the embedded simulation: the world the robot finds, and what goes wrong.

A scenario file (`config/scenarios/NAME.yaml`) names the task, the objects with their
location and attributes, the wrist-camera images (and, under `camera.steps`, the images
it shows while a given step runs), and the *events*: a situation that is reported when
the robot starts a given step ("the cup is dirty" once it looks for the cup). An event
with `seen_by: situation_detector` is not reported by the world node: it is what that
node should see in the step's camera images, said for the scenario's story and tests.
Events are matched against the step the executor announces, so the simulation
never needs to know the plan in advance, and a replanned step that no longer touches
the object fires nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.resources import share_path


@dataclass(frozen=True)
class SimObject:
    name: str  # PDDL object name, e.g. cup_1
    category: str  # detector class, e.g. cup
    location: str
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def graspable(self) -> bool:
        """Whether the gripper closes on it (a missing object is not there to close on)."""
        return bool(self.attributes.get("graspable", True)) and not self.attributes.get("missing")


@dataclass(frozen=True)
class ScenarioEvent:
    """Report `situation` when a step with `action` (and `argument`, if given) starts."""

    action: str
    situation: str
    about: str
    argument: str | None = None
    once: bool = True
    blocks: bool | None = None
    """What the situation should do to the task (`blocks:` in the file): documentation
    for people and the scenario tests; the simulation only reports it."""
    seen_by: str = ""
    """The node that reports it from the camera's pictures (`seen_by:`); "" when the
    world node itself reports it."""

    def matches(self, action: str, arguments: list[str]) -> bool:
        if action != self.action:
            return False
        return self.argument is None or self.argument in arguments


@dataclass(frozen=True)
class CameraStep:
    """The pictures the wrist camera shows while a step with `action` (and `argument`,
    if given) runs, instead of the scenario's default ones."""

    action: str
    images: tuple[str, ...]
    argument: str | None = None

    def matches(self, action: str, arguments: list[str]) -> bool:
        return action == self.action and (self.argument is None or self.argument in arguments)


@dataclass(frozen=True)
class Scenario:
    name: str
    task: str
    description: str
    objects: dict[str, SimObject]
    events: tuple[ScenarioEvent, ...]
    camera_images: tuple[str, ...]
    expect: str = "completed"
    """The outcome the scenario expects (`expect:`): completed, or no_solution."""
    stand_in: str | None = None
    """The object that should take a blocked one's role (`stand_in:`), if any."""
    camera_steps: tuple[CameraStep, ...] = ()
    """Pictures for particular steps (`camera.steps`), the first match wins."""

    def object(self, name: str) -> SimObject | None:
        return self.objects.get(name)


class EventTrigger:
    """Which events a step fires, remembering the one-shot events already reported."""

    def __init__(self, events: tuple[ScenarioEvent, ...]) -> None:
        self._events = events
        self._fired: set[int] = set()

    def on_step(self, action: str, arguments: list[str]) -> list[ScenarioEvent]:
        fired = []
        for index, event in enumerate(self._events):
            if event.once and index in self._fired:
                continue
            if event.matches(action, arguments):
                self._fired.add(index)
                fired.append(event)
        return fired


def scenario_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"}:
        return candidate
    return share_path("config", "scenarios", f"{name_or_path}.yaml")


def available_scenarios() -> list[str]:
    return sorted(p.stem for p in share_path("config", "scenarios").glob("*.yaml"))


def load_scenario(name_or_path: str) -> Scenario:
    """Load and check a scenario; mistakes are named with the file and the entry."""
    path = scenario_path(name_or_path)
    if not path.is_file():
        raise CowpError(
            f"unknown scenario '{name_or_path}' ({path} does not exist)",
            hint=f"known scenarios: {', '.join(available_scenarios()) or 'none'}",
        )
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise CowpError(f"scenario {path} is not valid YAML: {err}") from err
    try:
        objects = {
            name: SimObject(
                name=name,
                category=str(entry["class"]),
                location=str(entry["location"]),
                attributes=dict(entry.get("attributes") or {}),
            )
            for name, entry in (data.get("objects") or {}).items()
        }
        events = tuple(
            ScenarioEvent(
                action=str(entry["when"]["action"]),
                argument=entry["when"].get("argument"),
                situation=str(entry["situation"]),
                about=str(entry.get("object", "")),
                once=bool(entry.get("once", True)),
                blocks=None if entry.get("blocks") is None else bool(entry["blocks"]),
                seen_by=str(entry.get("seen_by", "")),
            )
            for entry in data.get("events") or []
        )
        return Scenario(
            name=str(data.get("name", path.stem)),
            task=str(data["task"]),
            description=str(data.get("description", "")),
            objects=objects,
            events=events,
            camera_images=tuple(str(i) for i in (data.get("camera") or {}).get("images", [])),
            camera_steps=tuple(
                CameraStep(
                    action=str(entry["when"]["action"]),
                    argument=entry["when"].get("argument"),
                    images=tuple(str(i) for i in entry["images"]),
                )
                for entry in (data.get("camera") or {}).get("steps", [])
            ),
            expect=str(data.get("expect", "completed")),
            stand_in=str(data["stand_in"]) if data.get("stand_in") else None,
        )
    except (KeyError, TypeError, ValueError) as err:
        raise CowpError(f"scenario {path} is malformed: missing or bad entry {err}") from err
