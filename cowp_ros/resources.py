"""Find the package's data files (config/, pddl/, launch/) wherever it is installed.

In the editable install of `make setup` they sit in the source tree beside the Python
package; in a colcon install they are in `share/cowp_ros/` (setup.py's data_files),
found through the ament index. `COWP_SHARE_DIR` overrides both, for a user who keeps
their own copy of the configuration.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from cowp_ros.errors import CowpError

PACKAGE = "cowp_ros"
SOURCE_ROOT = Path(__file__).resolve().parent.parent
TASKS_ENV = "COWP_TASKS"
"""Task registries added to the shipped one (`tasks/sources.py`), named here, where
`cowp plan --help` reads it without importing the registry."""


@cache
def share_dir() -> Path:
    """The folder holding config/, pddl/ and launch/."""
    override = os.environ.get("COWP_SHARE_DIR")
    if override:
        return Path(override)
    if (SOURCE_ROOT / "config").is_dir() and (SOURCE_ROOT / "package.xml").is_file():
        return SOURCE_ROOT
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE))
    except (ImportError, LookupError) as err:
        raise CowpError(
            "cannot find cowp_ros's data files (config/, pddl/)",
            hint="run from the source tree, source your colcon install, or set COWP_SHARE_DIR",
        ) from err


def share_path(*parts: str) -> Path:
    """A path under the share folder (it need not exist; callers say what is missing)."""
    return share_dir().joinpath(*parts)
