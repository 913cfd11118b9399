"""Fixtures for DKPROMPT's tests; the doubles live in dkprompt_fixtures.py (a module
name of its own, so that no other folder's conftest can shadow it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dkprompt_fixtures import ReplayVisionServer, recorded_replies


@pytest.fixture
def replay_server() -> Iterator[ReplayVisionServer]:
    server = ReplayVisionServer(recorded_replies())
    yield server
    server.close()
