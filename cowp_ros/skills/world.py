"""Where things are: the executor's running account of the base, the hand and objects.

A PDDL argument is an object name (cup_1, faucet_1, table_2); the base needs a map
pose. This lookup answers "where is X" in the order a person would: what the robot
itself did with X during this run (holding it, or put it down somewhere), a named
location with that name or class, an alias for the class, then the configured table of
where each object class usually is. Every miss says which files to edit.
"""

from __future__ import annotations

import re
from pathlib import Path

from cowp_ros.errors import CowpError

_INSTANCE_SUFFIX = re.compile(r"_\d+$")


def object_class(name: str) -> str:
    """cup_1 -> cup; names without a numeric suffix are their own class."""
    return _INSTANCE_SUFFIX.sub("", name.strip().lower())


class Whereabouts:
    """Object and robot whereabouts, seeded from config and updated by executed skills."""

    def __init__(
        self,
        locations: set[str],
        *,
        location_aliases: dict[str, str] | None = None,
        object_locations: dict[str, str] | None = None,
        sources: tuple[Path, ...] = (),
    ) -> None:
        self.locations = set(locations)
        self.location_aliases = dict(location_aliases or {})
        self.object_locations = dict(object_locations or {})
        self.sources = sources
        self.base_location: str | None = None
        self.holding: str | None = None
        self._placed: dict[str, str] = {}
        for table, entries in (
            ("location_aliases", self.location_aliases),
            ("object_locations", self.object_locations),
        ):
            for key, target in entries.items():
                if target not in self.locations:
                    raise CowpError(
                        f"{table}.{key} names '{target}', which is not a named location "
                        f"(base.locations): {', '.join(sorted(self.locations))}"
                    )

    def location_of(self, name: str) -> str:
        """The named location to drive to for a location or object name."""
        key = name.strip().lower()
        cls = object_class(key)
        if self.holding is not None and key == self.holding and self.base_location:
            return self.base_location
        if key in self._placed:
            return self._placed[key]
        for candidate in (key, cls):
            if candidate in self.locations:
                return candidate
        for candidate in (key, cls):
            if candidate in self.location_aliases:
                return self.location_aliases[candidate]
        for candidate in (key, cls):
            if candidate in self.object_locations:
                return self.object_locations[candidate]
        files = " and ".join(str(p) for p in self.sources) or "the configuration"
        raise CowpError(
            f"no location known for '{name}' (class '{cls}')",
            hint=f"add '{cls}' to object_locations or location_aliases, or a location "
            f"named '{cls}' to base.locations ({files})",
        )

    def placed_at(self, location: str) -> int:
        """How many objects the robot has put down at `location` this run."""
        return sum(1 for where in self._placed.values() if where == location)

    def picked(self, name: str) -> None:
        self.holding = name.strip().lower()
        self._placed.pop(self.holding, None)

    def dropped(self, name: str) -> None:
        """The object slipped out of the hand: the robot no longer holds it, and it is
        somewhere near where the base is."""
        self.released(name)

    def released(self, name: str) -> None:
        """The object (held or named) is now where the base is."""
        key = name.strip().lower()
        if self.base_location is not None:
            self._placed[key] = self.base_location
        if self.holding == key:
            self.holding = None
