"""Which object the hand holds, followed from the plan steps as they are announced.

The wrist camera looks past what the gripper holds, so a watcher of the camera (the
situation detector) must not call a held object missing. It sees only the steps the
executor announces, so it reads them as the executor's skills do: a step whose skill
grasps (or fetches) an object holds it from that step on; a step whose skill releases
it holds it to the end of that step.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.errors import CowpError
from cowp_ros.skills.skill_map import SkillMap

TAKES = frozenset({"grasp", "fetch"})
PUTS_DOWN = frozenset({"release"})


class HeldObjects:
    """The object in the hand, as far as the announced steps tell."""

    def __init__(self, skill_map: SkillMap) -> None:
        self.skill_map = skill_map
        self.held: str | None = None
        self._releasing: str | None = None

    def step(self, action: str, arguments: Sequence[str]) -> str | None:
        """A new step begins; the object held during it (None: the hand is empty)."""
        if self._releasing is not None and self._releasing == self.held:
            self.held = None
        self._releasing = None
        try:
            call = self.skill_map.resolve(action, list(arguments))
        except CowpError:
            return self.held  # a step no skill runs moves nothing in the hand
        for primitive in call.skill.steps:
            obj = call.roles.get(primitive.value)
            if obj is None:
                continue
            if primitive.kind in TAKES:
                self.held = obj
            elif primitive.kind in PUTS_DOWN:
                self._releasing = obj
        return self.held
