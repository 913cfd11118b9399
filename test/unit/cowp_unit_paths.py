"""Paths the unit tests share: the repository and the (optional) public COWP dataset."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATASET = Path(
    os.environ.get("COWP_DATASET_DIR", REPO.parent / "shared" / "data" / "cowp")
).resolve()
