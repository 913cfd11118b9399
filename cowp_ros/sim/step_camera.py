"""What the simulated wrist camera shows: the scenario's pictures, per step.

A real wrist camera sees what the step brings it to (the cup on the counter while the
robot finds it, the faucet while it fills); a scenario says the same with
`camera.steps`: while a matching step runs the camera shows that step's pictures, in
turn, else the scenario's default ones. The pictures are loaded once, at start-up.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cowp_ros.sim.scenario import Scenario

Loader = Callable[[str], tuple[np.ndarray, str]]


class StepCamera:
    """The frames for the step now running; `frame()` gives the next one in turn."""

    def __init__(self, scenario: Scenario, load: Loader) -> None:
        self._default = [load(ref) for ref in scenario.camera_images]
        self._steps = [(step, [load(ref) for ref in step.images]) for step in scenario.camera_steps]
        self._frames = self._default
        self._index = 0

    @property
    def origins(self) -> list[str]:
        """Where each loaded picture came from, for the node's start-up log."""
        return [origin for _, origin in self._default] + [
            origin for _, frames in self._steps for _, origin in frames
        ]

    def on_step(self, action: str, arguments: list[str]) -> None:
        """A step starts: show its pictures (or the default ones) from the first."""
        frames = next((f for step, f in self._steps if step.matches(action, arguments)), None)
        frames = frames if frames is not None else self._default
        if frames is not self._frames:
            self._frames, self._index = frames, 0

    def frame(self) -> np.ndarray | None:
        """The next picture to stream (None: the scenario has none)."""
        if not self._frames:
            return None
        pixels, _ = self._frames[self._index % len(self._frames)]
        self._index += 1
        return pixels
