"""Fixtures for the core unit tests (the tiny domain and the registered tasks are
test-wide: test/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def reports_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cowp run` writes a report on every run; keep the tests' out of build/reports."""
    monkeypatch.setenv("COWP_REPORTS_DIR", str(tmp_path / "reports"))
