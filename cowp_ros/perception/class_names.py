"""The detector model's own class names, and the other spellings of the same classes.

COCO has two spellings in circulation: Darknet's `coco.names` (what the default
YOLOv3-tiny model was trained with: `diningtable`, `sofa`, `tvmonitor`, `motorbike`)
and ultralytics' (`dining table`, `couch`, `tv`, `motorcycle`). Configuration, skills
files and people use either. A class asked for in one spelling must find the model's
class in the other, or the object is silently never watched; so every lookup goes
through `ModelClasses`, built from the names the loaded model itself reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Spellings of one class, each group naming the same COCO category.
SAME_CLASS: tuple[tuple[str, ...], ...] = (
    ("dining table", "diningtable", "table"),
    ("couch", "sofa"),
    ("tv", "tvmonitor", "tv monitor", "television"),
    ("motorcycle", "motorbike"),
    ("airplane", "aeroplane"),
    ("potted plant", "pottedplant"),
    ("cell phone", "cellphone", "mobile phone"),
    ("hair drier", "hair dryer"),
)
_SEPARATORS = re.compile(r"[\s_\-]+")


def class_key(name: str) -> str:
    """The spelling-free key of a class name: lower case, no spaces, underscores or dashes."""
    return _SEPARATORS.sub("", name.strip().lower())


_GROUP_OF: dict[str, int] = {
    class_key(spelling): index for index, group in enumerate(SAME_CLASS) for spelling in group
}


def _group_key(name: str) -> str:
    key = class_key(name)
    group = _GROUP_OF.get(key)
    return f"#{group}" if group is not None else key


class ModelClasses:
    """What one model can report, looked up in any spelling of a class."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        self._by_key: dict[str, str] = {}
        for name in self.names:
            self._by_key.setdefault(_group_key(name), name)

    def spelling(self, class_name: str) -> str | None:
        """The model's own name for `class_name` (None when the model has no such class)."""
        return self._by_key.get(_group_key(class_name))

    def __contains__(self, class_name: object) -> bool:
        return isinstance(class_name, str) and self.spelling(class_name) is not None


def same_class(first: str, second: str) -> bool:
    """Whether two names spell one class (`sofa` and `couch`)."""
    return _group_key(first) == _group_key(second)
